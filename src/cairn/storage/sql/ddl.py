"""The schema description (:mod:`cairn.storage.sql.schema`) written out in one dialect.

What the two stores spell differently is here and nothing else: the type names, a flag's
true and false, the numbered key, how a computed column is kept, the time now, and whether foreign
keys are declared (SQLite's are; PostgreSQL's store keeps none, as the in-database index's rows
come and go with their records in the same transactions). PostgreSQL's sequence and tenant
wall, which SQLite has no counterpart of, are added by :mod:`cairn.storage.postgres.schema`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from string import Formatter

from cairn.storage.sql.schema import (
    META_SEEDS,
    AddColumn,
    AddIndex,
    AddTable,
    Change,
    Column,
    DropIndex,
    Index,
    Schema,
    Table,
    Type,
)


@dataclass(frozen=True, slots=True)
class Spelling:
    dialect: str  # the name of the query dialect (cairn.storage.sql.dialect)
    types: Mapping[Type, str]
    true: str
    false: str
    not_flag: str  # "the flag {} is false"
    computed: str  # how a computed column is kept
    foreign_keys: bool
    now: str  # the time now, as stored (ISO-8601 UTC text)

    def column(self, column: Column) -> str:
        if column.type is Type.SERIAL:
            return f"{column.name} {self.types[Type.SERIAL]}"
        parts = [column.name, self.types[column.type]]
        if column.generated is not None:
            template = column.generated.expression
            flags = [field for _, field, _, _ in Formatter().parse(template) if field]
            expression = template.format(
                **{f: self.not_flag.format(f.removeprefix("not_")) for f in flags}
            )
            parts.append(f"GENERATED ALWAYS AS (\n        {expression}\n    ) {self.computed}")
            return " ".join(parts)
        if column.primary:
            parts.append("PRIMARY KEY")
        if column.references is not None and self.foreign_keys:
            parts.append(f"REFERENCES {column.references}")
        if column.not_null:
            parts.append("NOT NULL")
        if column.default is not None:
            default = column.default
            if isinstance(default, bool):
                default = self.true if default else self.false
            parts.append(f"DEFAULT {default}")
        if column.check is not None:
            parts.append(column.check)
        return " ".join(parts)

    def has(self, only: str | None) -> bool:
        return only is None or only == self.dialect

    def create_table(self, table: Table, name: str | None = None) -> str:
        lines = [self.column(c) for c in table.columns if self.has(c.only)]
        if table.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
        lines += [f"UNIQUE ({', '.join(u)})" for u in table.unique]
        lines += list(table.checks)
        body = ",\n    ".join(lines)
        return f"CREATE TABLE {name or table.name} (\n    {body}\n)"

    def create_index(self, index: Index) -> str:
        where = f" WHERE {index.where}" if index.where else ""
        return f"CREATE INDEX {index.name} ON {index.table}({', '.join(index.columns)}){where}"

    def change(self, change: Change) -> list[str]:
        """The statements of one change (none where this dialect lacks what it changes)."""
        if isinstance(change, AddTable):
            return [self.create_table(change.table)] if self.has(change.table.only) else []
        if isinstance(change, AddColumn):
            if not self.has(change.column.only):
                return []
            return [f"ALTER TABLE {change.table} ADD COLUMN {self.column(change.column)}"]
        if isinstance(change, AddIndex):
            return [self.create_index(change.index)] if self.has(change.index.only) else []
        assert isinstance(change, DropIndex)
        return [f"DROP INDEX {change.name}"]

    def tables(self, schema: Schema) -> list[Table]:
        return [t for t in schema.tables if self.has(t.only)]

    def create(self, schema: Schema) -> list[str]:
        """Every table and index of ``schema``, and the counters ``meta`` starts with."""
        statements = [self.create_table(t) for t in self.tables(schema)]
        statements.append(seed_meta())
        statements += [self.create_index(i) for i in schema.indexes if self.has(i.only)]
        return statements


def seed_meta(keys: Iterable[str] | None = None) -> str:
    seeds = [(k, v) for k, v in META_SEEDS if keys is None or k in keys]
    values = ", ".join(f"('{k}', '{v}')" for k, v in seeds)
    return f"INSERT INTO meta(key, value) VALUES {values}"


def script(statements: Iterable[str], comment: str = "") -> str:
    """Statements as one script (a comment first: what the version is for)."""
    head = f"-- {comment}\n" if comment else ""
    return head + "".join(f"{s};\n" for s in statements)


SQLITE_DDL = Spelling(
    "sqlite",
    {
        Type.KEY: "TEXT",
        Type.TEXT: "TEXT",
        Type.INT: "INTEGER",
        Type.BIGINT: "INTEGER",
        Type.REAL: "REAL",
        Type.BOOL: "INTEGER",
        Type.BLOB: "BLOB",
        Type.VECTOR: "BLOB",
        Type.SERIAL: "INTEGER PRIMARY KEY AUTOINCREMENT",
    },
    true="1",
    false="0",
    not_flag="{} = 0",
    computed="VIRTUAL",
    foreign_keys=True,
    now="strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
)
POSTGRES_DDL = Spelling(
    "postgresql",
    {
        Type.KEY: 'text COLLATE "C"',
        Type.TEXT: "text",
        Type.INT: "integer",
        Type.BIGINT: "bigint",
        Type.REAL: "double precision",
        Type.BOOL: "boolean",
        Type.BLOB: "bytea",
        Type.VECTOR: "vector",
        Type.SERIAL: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    },
    true="true",
    false="false",
    not_flag="NOT {}",
    computed="STORED",
    foreign_keys=False,
    now="""to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')""",
)
