"""The record store's schema, described once for SQLite and PostgreSQL.

Schema 5 is where both stores meet: PostgreSQL's first version, SQLite's fifth (its four
before are its own history, :mod:`cairn.storage.sqlite.schema`). :data:`BASE` describes every
table and index of schema 5 with portable types; each later version is a list of changes
(:data:`STEPS`). The schema at a version is the base with every step up to it applied
(:func:`at`), and a dialect renders each piece (:mod:`cairn.storage.sql.ddl`): a new store
runs the same scripts an old one upgrades with, so the two can never differ.

A version, once released, is frozen: a change of the schema is a new step, never an edit of
the base or of an earlier step (``tests/storage/test_schema_rendering.py`` compares what the
rendered scripts make with a frozen copy of the scripts written out by hand before).

A table or column that only one store has says so (``only``): the in-database index's
tables and the journal's record reference are PostgreSQL's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from cairn.model import (
    AUTHORITIES,
    DELIVERIES,
    KINDS,
    MEMORY_TYPES,
    ORIGINS,
    OUTCOME_SOURCES,
    OUTCOMES,
    SCOPES,
    STATES,
    TOMBSTONE_REASONS,
    TRUST_LEVELS,
)

POSTGRES_ONLY = "postgresql"


class Type(Enum):
    """A column's portable type (each dialect spells it, :mod:`cairn.storage.sql.ddl`)."""

    KEY = "key"  # text compared bytewise: ids, names, ISO times
    TEXT = "text"  # prose and JSON, never compared for order
    INT = "int"
    BIGINT = "bigint"
    REAL = "real"
    BOOL = "bool"
    BLOB = "blob"
    VECTOR = "vector"
    SERIAL = "serial"  # a key the database numbers, in insertion order


@dataclass(frozen=True, slots=True)
class Generated:
    """A computed column: ``expression`` with ``{not_<flag>}`` for "the flag is false"."""

    expression: str


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: Type
    not_null: bool = False
    default: str | bool | None = None  # an SQL literal, or a flag's value
    check: str | None = None
    primary: bool = False
    references: str | None = None  # "table(column)", declared where a dialect has them
    generated: Generated | None = None
    only: str | None = None  # the one dialect that has this column


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    checks: tuple[str, ...] = ()
    only: str | None = None

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


@dataclass(frozen=True, slots=True)
class Index:
    name: str
    table: str
    columns: tuple[str, ...]  # a column, or a column and its order ("rank_hint DESC")
    where: str | None = None
    only: str | None = None


@dataclass(frozen=True, slots=True)
class AddTable:
    table: Table


@dataclass(frozen=True, slots=True)
class AddColumn:
    table: str
    column: Column


@dataclass(frozen=True, slots=True)
class AddIndex:
    index: Index


@dataclass(frozen=True, slots=True)
class DropIndex:
    name: str


Change = AddTable | AddColumn | AddIndex | DropIndex


@dataclass(frozen=True, slots=True)
class Schema:
    tables: tuple[Table, ...]
    indexes: tuple[Index, ...]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def one_of(column: str, words: tuple[str, ...], *, null: bool = False) -> str:
    quoted = ", ".join(f"'{w}'" for w in words)
    if null:
        return f"CHECK ({column} IS NULL OR {column} IN ({quoted}))"
    return f"CHECK ({column} IN ({quoted}))"


K, X, N, B = Type.KEY, Type.TEXT, Type.INT, Type.BOOL


def _key(name: str, *, null: bool = False, only: str | None = None) -> Column:
    return Column(name, K, not_null=not null, only=only)


def _tenancy() -> tuple[Column, Column]:
    return _key("tenant"), _key("agent")


def _list(name: str) -> Column:
    """A JSON list, empty by default."""
    return Column(name, X, not_null=True, default="'[]'")


def _count(name: str) -> Column:
    return Column(name, N, not_null=True, default="0")


def _enum(name: str, words: tuple[str, ...]) -> Column:
    return Column(name, K, not_null=True, check=one_of(name, words))


_META = Table("meta", (Column("key", K, primary=True), Column("value", X, not_null=True)))
META_SEEDS: tuple[tuple[str, str], ...] = (("change_seq", "0"), ("generation", "0"))

_EVENTS = Table(
    "events",
    (
        Column("seq", Type.SERIAL, primary=True),
        *_tenancy(),
        _key("event_id"),
        _key("type"),
        _key("occurred_at"),
        _key("recorded_at"),
        _key("episode_id", null=True),
        _key("session_id", null=True),
        _key("sender", null=True),
        _key("caused_by", null=True),
        _key("supersedes", null=True),
        Column("payload", X, not_null=True),
        # The record an event is about, so a permanent forget finds its journal copies by
        # index (the same paths SQLite's purge reads with json_extract).
        Column(
            "record_ref",
            K,
            generated=Generated(
                "coalesce(payload::jsonb -> 'record' ->> 'id', payload::jsonb ->> 'record_id')"
            ),
            only=POSTGRES_ONLY,
        ),
    ),
    unique=(("tenant", "agent", "event_id"),),
)

_RECORDS = Table(
    "records",
    (
        Column("row", Type.BIGINT, primary=True),
        *_tenancy(),
        _key("id"),
        Column("version", N, not_null=True),
        Column("title", X),
        Column("body", X, not_null=True),
        _enum("kind", KINDS),
        _enum("memory_type", MEMORY_TYPES),
        _list("tags"),
        _key("language", null=True),
        _enum("authority", AUTHORITIES),
        _enum("origin", ORIGINS),
        _enum("trust", TRUST_LEVELS),
        _enum("scope", SCOPES),
        _key("project_id", null=True),
        _list("path_patterns"),
        _list("operations"),
        _list("phases"),
        _list("task_types"),
        _enum("state", STATES),
        Column("pinned", B, not_null=True, default=False),
        _key("evicted_at", null=True),
        _key("forgotten_at", null=True),
        Column("purged", B, not_null=True, default=False),
        _count("proof_count"),
        _count("failure_count"),
        _count("used_count"),
        _count("ignored_count"),
        _key("last_applied_at", null=True),
        _key("last_success_at", null=True),
        Column("confidence", Type.REAL, not_null=True, default="1.0"),
        Column("importance", Type.REAL, not_null=True, default="0.5"),
        _list("evidence"),
        Column("source", X, not_null=True, default="'{}'"),
        _key("external_ref", null=True),
        _key("episode_id", null=True),
        Column("position", N),
        _key("occurred_at", null=True),
        _key("recorded_at"),
        _key("valid_to", null=True),
        _key("expired_at", null=True),
        Column("supersedes", N),
        Column("superseded_by", N),
        _key("text_hash"),
        Column("change_seq", Type.BIGINT, not_null=True, default="0"),
        Column("entities_linked", B, not_null=True, default=True),
        Column("rank_hint", Type.REAL, not_null=True, default="0"),
        Column(
            "live",
            B,
            generated=Generated(
                "superseded_by IS NULL AND evicted_at IS NULL AND forgotten_at IS NULL"
                " AND {not_purged} AND state <> 'superseded'"
            ),
        ),
    ),
    unique=(("tenant", "agent", "id", "version"),),
    # Documents that cairn learned itself can never claim the operator's trust.
    checks=("CHECK (NOT (trust = 'system' AND origin IN ('reflection', 'review')))",),
)

_TOMBSTONES = Table(
    "tombstones",
    (
        *_tenancy(),
        _key("record_id"),
        _key("scope"),
        _key("project_id", null=True),
        _key("text_hash"),
        _enum("reason", TOMBSTONE_REASONS),
        Column("permanent", B, not_null=True, default=False),
        _key("removed_at"),
        _key("restored_at", null=True),
    ),
    primary_key=("tenant", "agent", "record_id"),
)

_APPLICATIONS = Table(
    "applications",
    (
        *_tenancy(),
        _key("application_id"),
        _key("record_id"),
        Column("record_version", N, not_null=True),
        Column("task", X),
        _enum("delivery", DELIVERIES),
        _list("why_applied"),
        _key("created_at"),
        Column("outcome", K, check=one_of("outcome", OUTCOMES, null=True)),
        _key("outcome_at", null=True),
        _key("session_id", null=True),
    ),
    primary_key=("tenant", "agent", "application_id"),
)

_PENDING_PURGES = Table(
    "pending_purges", (*_tenancy(), _key("record_id")), primary_key=("tenant", "agent", "record_id")
)

_ROW = Column("row", Type.BIGINT, primary=True, references="records(row)")
_RECORD_TERMS = Table(
    "record_terms",
    (
        _ROW,
        _key("tenant", only=POSTGRES_ONLY),
        _key("agent", only=POSTGRES_ONLY),
        Column("length", N, not_null=True),
        Column("keys", Type.BLOB, not_null=True),
        Column("counts", Type.BLOB, not_null=True),
        Column("entity_keys", Type.BLOB),
    ),
)

_VECTORS = Table(
    "vectors",
    (
        _ROW,
        _key("tenant", only=POSTGRES_ONLY),
        _key("agent", only=POSTGRES_ONLY),
        _key("project_id", null=True, only=POSTGRES_ONLY),
        Column("live", B, not_null=True, only=POSTGRES_ONLY),
        _key("model"),
        Column("dim", N, not_null=True),
        Column("vec", Type.VECTOR, not_null=True),
    ),
)


def _in_database(name: str, *columns: Column, key: tuple[str, ...]) -> Table:
    """A table of PostgreSQL's in-database search index, keyed by tenant and agent first."""
    return Table(name, (*_tenancy(), *columns), primary_key=key, only=POSTGRES_ONLY)


_BIG = Type.BIGINT
_IN_DATABASE_INDEX = (
    _in_database(
        "postings",
        Column("term", _BIG, not_null=True),
        Column("row", _BIG, not_null=True),
        Column("tf", N, not_null=True),
        Column("length", N, not_null=True),
        Column("live", B, not_null=True),
        _key("project_id", null=True),
        key=("tenant", "agent", "term", "row"),
    ),
    _in_database(
        "term_stats",
        Column("term", _BIG, not_null=True),
        Column("df", N, not_null=True),
        key=("tenant", "agent", "term"),
    ),
    _in_database(
        "partition_stats",
        Column("documents", _BIG, not_null=True),
        Column("length", _BIG, not_null=True),
        key=("tenant", "agent"),
    ),
    _in_database(
        "entity_links",
        Column("key", _BIG, not_null=True),
        Column("row", _BIG, not_null=True),
        key=("tenant", "agent", "key", "row"),
    ),
)

_TA = ("tenant", "agent")
BASE = Schema(
    (
        _META,
        _EVENTS,
        _RECORDS,
        _TOMBSTONES,
        _APPLICATIONS,
        _PENDING_PURGES,
        _RECORD_TERMS,
        _VECTORS,
        *_IN_DATABASE_INDEX,
    ),
    (
        Index("events_by_tenant", "events", (*_TA, "seq")),
        Index(
            "events_by_record",
            "events",
            (*_TA, "record_ref"),
            where="record_ref IS NOT NULL",
            only=POSTGRES_ONLY,
        ),
        Index("records_current", "records", (*_TA, "id", "superseded_by")),
        Index("records_changes", "records", ("change_seq",)),
        Index("records_ref", "records", (*_TA, "external_ref")),
        Index("records_episode", "records", (*_TA, "episode_id", "position")),
        Index("records_unlinked", "records", ("agent",), where="NOT entities_linked"),
        Index("records_rules", "records", (*_TA, "rank_hint"), where="live"),
        Index("tombstones_hash", "tombstones", (*_TA, "text_hash")),
        Index("applications_record", "applications", (*_TA, "record_id")),
        Index("vectors_partition", "vectors", _TA, only=POSTGRES_ONLY),
    ),
)
BASE_VERSION = 5

STEPS: tuple[tuple[int, str, tuple[Change, ...]], ...] = (
    (
        6,
        "learning: who judged each application's outcome (the failure corroboration gate"
        " counts independent sessions and deterministic sources), telemetry counters"
        " (counts only, never content), and the journal by event type (cursors, last runs)",
        (
            AddColumn(
                "applications",
                Column(
                    "outcome_source", K, check=one_of("outcome_source", OUTCOME_SOURCES, null=True)
                ),
            ),
            AddColumn("applications", _key("outcome_session", null=True)),
            AddTable(
                Table(
                    "telemetry",
                    (
                        *_tenancy(),
                        _key("name"),
                        Column("value", Type.REAL, not_null=True, default="0"),
                    ),
                    primary_key=("tenant", "agent", "name"),
                )
            ),
            AddIndex(Index("events_by_type", "events", (*_TA, "type", "seq"))),
            AddIndex(Index("records_sweep", "records", (*_TA, "failure_count"), where="live")),
        ),
    ),
    (
        7,
        "the dashboard: a tenant's live memories, newest (or oldest) first, a page at a time,"
        " walked in order instead of sorting every memory of the tenant; the journal by"
        " session and by episode; the director's rules by the engine's rank hint, ties by id,"
        " walked in that order (the hint alone left every tie of a 100k tenant to be sorted"
        " for each task)",
        (
            AddIndex(Index("records_recent", "records", (*_TA, "recorded_at", "id"), where="live")),
            AddIndex(Index("events_by_session", "events", (*_TA, "session_id", "seq"))),
            AddIndex(Index("events_by_episode", "events", (*_TA, "episode_id", "seq"))),
            DropIndex("records_rules"),
            AddIndex(
                Index("records_rules", "records", (*_TA, "rank_hint DESC", "id"), where="live")
            ),
        ),
    ),
    (
        8,
        "a write's duplicate check finds a body by its hash through an index, in the"
        " listing's order (recorded_at, id), instead of scanning every memory of the tenant",
        (AddIndex(Index("records_hash", "records", (*_TA, "text_hash", "recorded_at", "id"))),),
    ),
)
LATEST_VERSION = STEPS[-1][0]


def applied(schema: Schema, changes: tuple[Change, ...]) -> Schema:
    """``schema`` with ``changes`` made, in order."""
    tables, indexes = list(schema.tables), list(schema.indexes)
    for change in changes:
        if isinstance(change, AddTable):
            tables.append(change.table)
        elif isinstance(change, AddColumn):
            n = next(i for i, t in enumerate(tables) if t.name == change.table)
            tables[n] = replace(tables[n], columns=(*tables[n].columns, change.column))
        elif isinstance(change, AddIndex):
            indexes.append(change.index)
        else:
            indexes = [i for i in indexes if i.name != change.name]
    return Schema(tuple(tables), tuple(indexes))


def at(version: int) -> Schema:
    """The schema as version ``version`` (the base's or later) leaves it."""
    schema = BASE
    for number, _, changes in STEPS:
        if number <= version:
            schema = applied(schema, changes)
    return schema
