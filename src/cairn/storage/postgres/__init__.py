"""The PostgreSQL pair: a record store and an in-database search index (needs the
``postgres`` extra: psycopg 3 and psycopg_pool; the database needs pgvector)."""

from cairn.storage.postgres.record_store import PostgresRecordStore
from cairn.storage.postgres.search_index import PostgresSearchIndex

__all__ = ["PostgresRecordStore", "PostgresSearchIndex"]
