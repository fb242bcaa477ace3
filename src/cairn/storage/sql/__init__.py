"""The SQL both record stores share: row mapping, reads, journal and writes, written once
over a :class:`~cairn.storage.sql.dialect.Dialect` (what SQLite and PostgreSQL spell apart).
"""
