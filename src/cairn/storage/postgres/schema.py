"""The PostgreSQL schema: the record store's tables, the in-database index, the tenant wall.

Versions are numbered with the record model, like the SQLite file's: PostgreSQL support
begins at schema 5 (every key begins with the tenant and agent), so a store of either
backend reporting schema 5 holds the same records, versions, journal, tombstones and
applications. A later change of the record model takes the next number in both stores.

Beside the records live the tables the in-database search index reads, written in the same
transactions as the records they index:

- ``record_terms``: each row's analysed terms and entity keys, encoded as in SQLite (the
  change feed hands them to any follower);
- ``postings``: one row per (row, term) with the term count, the document's length, its
  liveness and project, keyed by tenant, agent and term, so a keyword search reads exactly
  the postings of its terms in its partition;
- ``term_stats`` / ``partition_stats``: live documents per term and per partition, and
  their total length -- BM25's statistics, kept exact as rows come and go;
- ``vectors``: each row's vector (pgvector) with its namespace, project and liveness; an
  HNSW index per dimension is made by the search index that knows it;
- ``entity_links``: hashed entity keys per row, for the entity lane.

Every text column sorts bytewise (``COLLATE "C"``), as SQLite compares text, so ids and ISO
times order and compare the same in both stores.

Row-level security is the second wall behind the tenant in every key: each table with a
tenant column admits only the rows of the tenant the transaction names in the session
variable ``cairn.tenant``. A transaction that names none sees nothing and can write
nothing. Reading across tenants (the change feed, pending purges and links) needs the
explicit ``cairn.every_tenant = 'on'`` and is read-only.
"""

from __future__ import annotations

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

T = 'text COLLATE "C"'
STORE_ROLE = "cairn_store"
TENANT_SETTING = "cairn.tenant"
EVERY_TENANT_SETTING = "cairn.every_tenant"

# Tables holding one tenant's data each row: row-level security applies to all of them.
V5_TENANT_TABLES: tuple[str, ...] = (
    "events",
    "records",
    "tombstones",
    "applications",
    "pending_purges",
    "record_terms",
    "vectors",
    "postings",
    "term_stats",
    "partition_stats",
    "entity_links",
)
TENANT_TABLES: tuple[str, ...] = (*V5_TENANT_TABLES, "telemetry")


def _in(column: str, words: tuple[str, ...]) -> str:
    quoted = ", ".join(f"'{w}'" for w in words)
    return f"CHECK ({column} IN ({quoted}))"


def _wall(table: str) -> str:
    """The tenant wall of one table: reads of the named tenant (or, explicitly, of every
    tenant); writes of the named tenant only."""
    mine = f"tenant = current_setting('{TENANT_SETTING}', true)"
    every = f"current_setting('{EVERY_TENANT_SETTING}', true) = 'on'"
    return f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
CREATE POLICY {table}_read ON {table} FOR SELECT USING ({mine} OR {every});
CREATE POLICY {table}_insert ON {table} FOR INSERT WITH CHECK ({mine});
CREATE POLICY {table}_update ON {table} FOR UPDATE USING ({mine}) WITH CHECK ({mine});
CREATE POLICY {table}_delete ON {table} FOR DELETE USING ({mine});
"""


def _v5() -> str:
    return f"""
CREATE TABLE meta (key {T} PRIMARY KEY, value text NOT NULL);
INSERT INTO meta(key, value) VALUES ('change_seq', '0'), ('generation', '0');

CREATE TABLE events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    event_id {T} NOT NULL,
    type {T} NOT NULL,
    occurred_at {T} NOT NULL,
    recorded_at {T} NOT NULL,
    episode_id {T},
    session_id {T},
    sender {T},
    caused_by {T},
    supersedes {T},
    payload text NOT NULL,
    -- The record an event is about, so a permanent forget finds its journal copies by
    -- index (the same paths SQLite's purge reads with json_extract).
    record_ref {T} GENERATED ALWAYS AS (
        coalesce(payload::jsonb -> 'record' ->> 'id', payload::jsonb ->> 'record_id')
    ) STORED,
    UNIQUE (tenant, agent, event_id)
);
CREATE INDEX events_by_tenant ON events(tenant, agent, seq);
CREATE INDEX events_by_record ON events(tenant, agent, record_ref)
    WHERE record_ref IS NOT NULL;

CREATE SEQUENCE records_row_seq AS bigint;
CREATE TABLE records (
    row bigint PRIMARY KEY,
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    id {T} NOT NULL,
    version integer NOT NULL,
    title text,
    body text NOT NULL,
    kind {T} NOT NULL {_in("kind", KINDS)},
    memory_type {T} NOT NULL {_in("memory_type", MEMORY_TYPES)},
    tags text NOT NULL DEFAULT '[]',
    language {T},
    authority {T} NOT NULL {_in("authority", AUTHORITIES)},
    origin {T} NOT NULL {_in("origin", ORIGINS)},
    trust {T} NOT NULL {_in("trust", TRUST_LEVELS)},
    scope {T} NOT NULL {_in("scope", SCOPES)},
    project_id {T},
    path_patterns text NOT NULL DEFAULT '[]',
    operations text NOT NULL DEFAULT '[]',
    phases text NOT NULL DEFAULT '[]',
    task_types text NOT NULL DEFAULT '[]',
    state {T} NOT NULL {_in("state", STATES)},
    pinned boolean NOT NULL DEFAULT false,
    evicted_at {T},
    forgotten_at {T},
    purged boolean NOT NULL DEFAULT false,
    proof_count integer NOT NULL DEFAULT 0,
    failure_count integer NOT NULL DEFAULT 0,
    used_count integer NOT NULL DEFAULT 0,
    ignored_count integer NOT NULL DEFAULT 0,
    last_applied_at {T},
    last_success_at {T},
    confidence double precision NOT NULL DEFAULT 1.0,
    importance double precision NOT NULL DEFAULT 0.5,
    evidence text NOT NULL DEFAULT '[]',
    source text NOT NULL DEFAULT '{{}}',
    external_ref {T},
    episode_id {T},
    position integer,
    occurred_at {T},
    recorded_at {T} NOT NULL,
    valid_to {T},
    expired_at {T},
    supersedes integer,
    superseded_by integer,
    text_hash {T} NOT NULL,
    change_seq bigint NOT NULL DEFAULT 0,
    entities_linked boolean NOT NULL DEFAULT true,
    rank_hint double precision NOT NULL DEFAULT 0,
    live boolean GENERATED ALWAYS AS (
        superseded_by IS NULL AND evicted_at IS NULL AND forgotten_at IS NULL
        AND NOT purged AND state <> 'superseded'
    ) STORED,
    UNIQUE (tenant, agent, id, version),
    -- Documents that cairn learned itself can never claim the operator's trust.
    CHECK (NOT (trust = 'system' AND origin IN ('reflection', 'review')))
);
CREATE INDEX records_current ON records(tenant, agent, id, superseded_by);
CREATE INDEX records_changes ON records(change_seq);
CREATE INDEX records_ref ON records(tenant, agent, external_ref);
CREATE INDEX records_episode ON records(tenant, agent, episode_id, position);
CREATE INDEX records_unlinked ON records(agent) WHERE NOT entities_linked;
CREATE INDEX records_rules ON records(tenant, agent, rank_hint) WHERE live;

CREATE TABLE tombstones (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    record_id {T} NOT NULL,
    scope {T} NOT NULL,
    project_id {T},
    text_hash {T} NOT NULL,
    reason {T} NOT NULL {_in("reason", TOMBSTONE_REASONS)},
    permanent boolean NOT NULL DEFAULT false,
    removed_at {T} NOT NULL,
    restored_at {T},
    PRIMARY KEY (tenant, agent, record_id)
);
CREATE INDEX tombstones_hash ON tombstones(tenant, agent, text_hash);

CREATE TABLE applications (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    application_id {T} NOT NULL,
    record_id {T} NOT NULL,
    record_version integer NOT NULL,
    task text,
    delivery {T} NOT NULL {_in("delivery", DELIVERIES)},
    why_applied text NOT NULL DEFAULT '[]',
    created_at {T} NOT NULL,
    outcome {T} CHECK (outcome IS NULL OR outcome IN ({", ".join(f"'{o}'" for o in OUTCOMES)})),
    outcome_at {T},
    session_id {T},
    PRIMARY KEY (tenant, agent, application_id)
);
CREATE INDEX applications_record ON applications(tenant, agent, record_id);

CREATE TABLE pending_purges (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    record_id {T} NOT NULL,
    PRIMARY KEY (tenant, agent, record_id)
);

CREATE TABLE record_terms (
    row bigint PRIMARY KEY,
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    length integer NOT NULL,
    keys bytea NOT NULL,
    counts bytea NOT NULL,
    entity_keys bytea
);

CREATE TABLE vectors (
    row bigint PRIMARY KEY,
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    project_id {T},
    live boolean NOT NULL,
    model {T} NOT NULL,
    dim integer NOT NULL,
    vec vector NOT NULL
);
CREATE INDEX vectors_partition ON vectors(tenant, agent);

CREATE TABLE postings (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    term bigint NOT NULL,
    row bigint NOT NULL,
    tf integer NOT NULL,
    length integer NOT NULL,
    live boolean NOT NULL,
    project_id {T},
    PRIMARY KEY (tenant, agent, term, row)
);

CREATE TABLE term_stats (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    term bigint NOT NULL,
    df integer NOT NULL,
    PRIMARY KEY (tenant, agent, term)
);

CREATE TABLE partition_stats (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    documents bigint NOT NULL,
    length bigint NOT NULL,
    PRIMARY KEY (tenant, agent)
);

CREATE TABLE entity_links (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    key bigint NOT NULL,
    row bigint NOT NULL,
    PRIMARY KEY (tenant, agent, key, row)
);
""" + "".join(_wall(table) for table in V5_TENANT_TABLES)


def _v6() -> str:
    sources = ", ".join(f"'{s}'" for s in OUTCOME_SOURCES)
    return f"""
-- v6, learning (as SQLite's v6): who judged each application's outcome, telemetry
-- counters (counts only), the journal by event type.
ALTER TABLE applications ADD COLUMN outcome_source {T}
    CHECK (outcome_source IS NULL OR outcome_source IN ({sources}));
ALTER TABLE applications ADD COLUMN outcome_session {T};
CREATE TABLE telemetry (
    tenant {T} NOT NULL,
    agent {T} NOT NULL,
    name {T} NOT NULL,
    value double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, agent, name)
);
CREATE INDEX events_by_type ON events(tenant, agent, type, seq);
CREATE INDEX records_sweep ON records(tenant, agent, failure_count) WHERE live;
""" + _wall("telemetry")


V5 = _v5()
V6 = _v6()
V7 = """
-- v7, the dashboard (as SQLite's v7): a tenant's live memories in recorded order, a page
-- at a time, walked in order instead of sorting them all; the journal by session and by
-- episode.
CREATE INDEX records_recent ON records(tenant, agent, recorded_at, id) WHERE live;
CREATE INDEX events_by_session ON events(tenant, agent, session_id, seq);
CREATE INDEX events_by_episode ON events(tenant, agent, episode_id, seq);
-- The director's rules by the engine's rank hint, ties by id, walked in that order (the
-- hint alone left every tie of a 100k tenant to be sorted for each task).
DROP INDEX records_rules;
CREATE INDEX records_rules ON records(tenant, agent, rank_hint DESC, id) WHERE live;
"""
V8 = """
-- v8 (as SQLite's v8): a write's duplicate check finds a body by its hash through an
-- index, in the listing's order, instead of scanning every memory of the tenant.
CREATE INDEX records_hash ON records(tenant, agent, text_hash, recorded_at, id);
"""
MIGRATIONS: tuple[tuple[int, str], ...] = ((5, V5), (6, V6), (7, V7), (8, V8))
LATEST_VERSION = MIGRATIONS[-1][0]
# The server's own tables, of no tenant, beside the versioned schema (which SQLite's
# mirrors): made when missing, under the setup lock, by every version that knows them.
SERVER_TABLES: tuple[str, ...] = ("server_tokens",)
# The server's tokens, in the database every server of it reads, so a token made or
# revoked on one host holds on all of them at once. Only each token's SHA-256 is kept.
# Not behind the tenant wall: a request's tenant is what its token says.
SERVER_TOKENS = """
CREATE TABLE IF NOT EXISTS server_tokens (
    id text COLLATE "C" PRIMARY KEY,
    sha256 text COLLATE "C" NOT NULL UNIQUE,
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C",
    created_at text NOT NULL
)
"""
OWN_TABLES = frozenset(("schema_version", "meta", *TENANT_TABLES, *SERVER_TABLES))
