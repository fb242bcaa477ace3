"""The SQLite file's schema versions, applied in order; ``schema_version`` records the newest.

Versions 1 to 4 are the file's own history, written out as they were released (a file of
any of them still opens). Version 5 brings its tables to schema 5, where PostgreSQL's store
begins, and every version from then on is rendered from the one description both stores
share (:mod:`cairn.storage.sql.schema`). Each migration is forward-only and all run in one
transaction. A file made by an older cairn opens and upgrades in place (tested in
tests/storage/sqlite/test_migrations.py).
"""

from __future__ import annotations

from cairn.model import (
    AUTHORITIES,
    KINDS,
    MEMORY_TYPES,
    ORIGINS,
    SCOPES,
    STATES,
    TOMBSTONE_REASONS,
    TRUST_LEVELS,
)
from cairn.storage.sql import schema as described
from cairn.storage.sql.ddl import SQLITE_DDL, script, seed_meta


def _in(column: str, words: tuple[str, ...]) -> str:
    quoted = ", ".join(f"'{w}'" for w in words)
    return f"CHECK ({column} IN ({quoted}))"


# v1: journal, records with every governance field, tombstones, keyword indexes, vectors.
V1 = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('change_seq', '0');

CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    episode_id TEXT,
    session_id TEXT,
    sender TEXT,
    caused_by TEXT,
    supersedes TEXT,
    payload TEXT NOT NULL
);
CREATE INDEX events_by_tenant ON events(tenant, agent, seq);

CREATE TABLE records (
    row INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    title TEXT,
    body TEXT NOT NULL,
    kind TEXT NOT NULL {_in("kind", KINDS)},
    memory_type TEXT NOT NULL {_in("memory_type", MEMORY_TYPES)},
    tags TEXT NOT NULL DEFAULT '[]',
    language TEXT,
    authority TEXT NOT NULL {_in("authority", AUTHORITIES)},
    origin TEXT NOT NULL {_in("origin", ORIGINS)},
    trust TEXT NOT NULL {_in("trust", TRUST_LEVELS)},
    scope TEXT NOT NULL {_in("scope", SCOPES)},
    project_id TEXT,
    path_patterns TEXT NOT NULL DEFAULT '[]',
    operations TEXT NOT NULL DEFAULT '[]',
    phases TEXT NOT NULL DEFAULT '[]',
    task_types TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL {_in("state", STATES)},
    pinned INTEGER NOT NULL DEFAULT 0,
    evicted_at TEXT,
    forgotten_at TEXT,
    purged INTEGER NOT NULL DEFAULT 0,
    proof_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    used_count INTEGER NOT NULL DEFAULT 0,
    ignored_count INTEGER NOT NULL DEFAULT 0,
    last_applied_at TEXT,
    last_success_at TEXT,
    confidence REAL NOT NULL DEFAULT 1.0,
    evidence TEXT NOT NULL DEFAULT '[]',
    source TEXT NOT NULL DEFAULT '{{}}',
    external_ref TEXT,
    occurred_at TEXT,
    recorded_at TEXT NOT NULL,
    valid_to TEXT,
    expired_at TEXT,
    supersedes INTEGER,
    superseded_by INTEGER,
    text_hash TEXT NOT NULL,
    change_seq INTEGER NOT NULL DEFAULT 0,
    live INTEGER GENERATED ALWAYS AS (
        superseded_by IS NULL AND evicted_at IS NULL AND forgotten_at IS NULL
        AND purged = 0 AND state <> 'superseded'
    ) VIRTUAL,
    UNIQUE (id, version),
    -- Documents that cairn learned itself can never claim the operator's trust.
    CHECK (NOT (trust = 'system' AND origin IN ('reflection', 'review')))
);
CREATE INDEX records_current ON records(tenant, agent, superseded_by, id);
CREATE INDEX records_changes ON records(change_seq);
CREATE INDEX records_ref ON records(tenant, agent, external_ref);

CREATE TABLE tombstones (
    record_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    scope TEXT NOT NULL,
    project_id TEXT,
    text_hash TEXT NOT NULL,
    reason TEXT NOT NULL {_in("reason", TOMBSTONE_REASONS)},
    permanent INTEGER NOT NULL DEFAULT 0,
    removed_at TEXT NOT NULL,
    restored_at TEXT
);
CREATE INDEX tombstones_hash ON tombstones(tenant, agent, text_hash);

CREATE TABLE vectors (
    row INTEGER PRIMARY KEY REFERENCES records(row),
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL
);

-- Keyword indexes hold live rows only, so a lane never ranks a row it would drop.
CREATE VIRTUAL TABLE records_fts USING fts5(
    title, body, tags, content='records', content_rowid='row',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE records_trigram USING fts5(
    title, body, content='records', content_rowid='row', tokenize='trigram'
);
CREATE TRIGGER records_ai AFTER INSERT ON records WHEN new.live BEGIN
    INSERT INTO records_fts(rowid, title, body, tags)
        VALUES (new.row, new.title, new.body, new.tags);
    INSERT INTO records_trigram(rowid, title, body) VALUES (new.row, new.title, new.body);
END;
CREATE TRIGGER records_ad AFTER DELETE ON records WHEN old.live BEGIN
    INSERT INTO records_fts(records_fts, rowid, title, body, tags)
        VALUES ('delete', old.row, old.title, old.body, old.tags);
    INSERT INTO records_trigram(records_trigram, rowid, title, body)
        VALUES ('delete', old.row, old.title, old.body);
END;
CREATE TRIGGER records_au_out AFTER UPDATE ON records WHEN old.live AND (
    NOT new.live OR old.body IS NOT new.body OR old.title IS NOT new.title
    OR old.tags IS NOT new.tags) BEGIN
    INSERT INTO records_fts(records_fts, rowid, title, body, tags)
        VALUES ('delete', old.row, old.title, old.body, old.tags);
    INSERT INTO records_trigram(records_trigram, rowid, title, body)
        VALUES ('delete', old.row, old.title, old.body);
END;
CREATE TRIGGER records_au_in AFTER UPDATE ON records WHEN new.live AND (
    NOT old.live OR old.body IS NOT new.body OR old.title IS NOT new.title
    OR old.tags IS NOT new.tags) BEGIN
    INSERT INTO records_fts(rowid, title, body, tags)
        VALUES (new.row, new.title, new.body, new.tags);
    INSERT INTO records_trigram(rowid, title, body) VALUES (new.row, new.title, new.body);
END;
"""

# v2: entity links for the entity lane, and application records for the context director.
V2 = """
CREATE TABLE entities (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    UNIQUE (tenant, key)
);
CREATE TABLE record_entities (
    entity_id INTEGER NOT NULL REFERENCES entities(id),
    row INTEGER NOT NULL REFERENCES records(row),
    PRIMARY KEY (entity_id, row)
) WITHOUT ROWID;
CREATE INDEX record_entities_row ON record_entities(row);

CREATE TABLE applications (
    application_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    record_id TEXT NOT NULL,
    record_version INTEGER NOT NULL,
    task TEXT,
    delivery TEXT NOT NULL CHECK (delivery IN ('resident', 'manifest', 'expanded', 'recall')),
    why_applied TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    outcome TEXT CHECK (outcome IS NULL OR outcome IN (
        'used-successfully', 'ignored', 'overridden', 'corrected', 'contributed-to-failure')),
    outcome_at TEXT
);
CREATE INDEX applications_record ON applications(tenant, record_id);

ALTER TABLE records ADD COLUMN importance REAL NOT NULL DEFAULT 0.5;
"""

# v3: a memory's place in its episode (a conversation session, a task run), so recall can
# lift a hit's neighbours and whole episodes that match well.
# Also: the trigram index keeps only bodies with CJK text or code identifiers (the writer
# sets substring_index), since prose is served by the word index.
V3 = """
ALTER TABLE records ADD COLUMN episode_id TEXT;
ALTER TABLE records ADD COLUMN position INTEGER;
ALTER TABLE records ADD COLUMN substring_index INTEGER NOT NULL DEFAULT 1;
CREATE INDEX records_episode ON records(tenant, agent, episode_id, position);
DROP TRIGGER records_ai;
DROP TRIGGER records_ad;
DROP TRIGGER records_au_out;
DROP TRIGGER records_au_in;
CREATE TRIGGER records_ai AFTER INSERT ON records WHEN new.live BEGIN
    INSERT INTO records_fts(rowid, title, body, tags)
        VALUES (new.row, new.title, new.body, new.tags);
    INSERT INTO records_trigram(rowid, title, body)
        SELECT new.row, new.title, new.body WHERE new.substring_index;
END;
CREATE TRIGGER records_ad AFTER DELETE ON records WHEN old.live BEGIN
    INSERT INTO records_fts(records_fts, rowid, title, body, tags)
        VALUES ('delete', old.row, old.title, old.body, old.tags);
    INSERT INTO records_trigram(records_trigram, rowid, title, body)
        SELECT 'delete', old.row, old.title, old.body WHERE old.substring_index;
END;
CREATE TRIGGER records_au_out AFTER UPDATE ON records WHEN old.live AND (
    NOT new.live OR old.body IS NOT new.body OR old.title IS NOT new.title
    OR old.tags IS NOT new.tags) BEGIN
    INSERT INTO records_fts(records_fts, rowid, title, body, tags)
        VALUES ('delete', old.row, old.title, old.body, old.tags);
    INSERT INTO records_trigram(records_trigram, rowid, title, body)
        SELECT 'delete', old.row, old.title, old.body WHERE old.substring_index;
END;
CREATE TRIGGER records_au_in AFTER UPDATE ON records WHEN new.live AND (
    NOT old.live OR old.body IS NOT new.body OR old.title IS NOT new.title
    OR old.tags IS NOT new.tags) BEGIN
    INSERT INTO records_fts(rowid, title, body, tags)
        VALUES (new.row, new.title, new.body, new.tags);
    INSERT INTO records_trigram(rowid, title, body)
        SELECT new.row, new.title, new.body WHERE new.substring_index;
END;
"""

# v4: keyword search moves out of FTS5 into record_terms (each row's analysed term keys and
# counts), which the in-memory BM25 index (storage/inprocess/keyword_index.py) loads and follows:
# FTS5's per-row bm25() and the join for the tenant filter were most of a recall at 100k
# memories. CJK and code identifiers are terms of that index too (bigrams, whole
# identifiers), so the trigram index, its triggers and the column that chose its rows go.
# Entity links (for the opt-in entity lane) are written only while an agent has the lane
# on; rows written without them are marked and linked when a Memory opens with it on.
# The store fills record_terms for existing rows right after this script.
V4 = """
CREATE TABLE record_terms (
    row INTEGER PRIMARY KEY REFERENCES records(row),
    length INTEGER NOT NULL,
    keys BLOB NOT NULL,
    counts BLOB NOT NULL
);
DROP TRIGGER records_ai;
DROP TRIGGER records_ad;
DROP TRIGGER records_au_out;
DROP TRIGGER records_au_in;
DROP TABLE records_fts;
DROP TABLE records_trigram;
ALTER TABLE records DROP COLUMN substring_index;
ALTER TABLE records ADD COLUMN entities_linked INTEGER NOT NULL DEFAULT 1;
CREATE INDEX records_unlinked ON records(agent) WHERE NOT entities_linked;
"""

HISTORY: tuple[tuple[int, str], ...] = ((1, V1), (2, V2), (3, V3), (4, V4))

# v5 rebuilds these tables from their schema-4 shapes (an SQLite table cannot gain a key),
# copying every row; the columns each gained are filled by their defaults.
_REBUILT = ("events", "records", "tombstones", "applications")
_NEW_IN_V5 = {"records": ("rank_hint",), "applications": ("session_id",)}
_ORDER = {"events": " ORDER BY seq", "records": " ORDER BY row"}


def _v5() -> str:
    """v5: every key begins with the tenant and agent (SPEC §3): events, record versions,
    tombstones and applications. An id of another tenant is unknown; no import or replay in
    one tenant can touch, shadow or block a row of another. The tables become schema 5's
    shapes (:data:`cairn.storage.sql.schema.BASE`), which PostgreSQL's store begins with.

    Entity keys move beside the keyword terms, hashed, so a purge that deletes a row's terms
    deletes its entity keys too (the entities table kept every key in plain text; the store
    moves them after this script). A permanent forget is noted in ``pending_purges`` in its
    own transaction and cleared when every file under the home is clean, so a kill in
    between is finished on the next open."""
    base = described.BASE
    statements: list[str] = []
    for name in _REBUILT:
        table = base.table(name)
        statements.append(SQLITE_DDL.create_table(table, f"{name}_v5"))
        kept = [
            c.name
            for c in table.columns
            if SQLITE_DDL.has(c.only)
            and c.generated is None
            and c.name not in _NEW_IN_V5.get(name, ())
        ]
        columns = ", ".join(kept)
        statements += [
            f"INSERT INTO {name}_v5({columns}) SELECT {columns} FROM {name}{_ORDER.get(name, '')}",
            f"DROP TABLE {name}",
            f"ALTER TABLE {name}_v5 RENAME TO {name}",
        ]
        statements += [
            SQLITE_DDL.create_index(i)
            for i in base.indexes
            if i.table == name and SQLITE_DDL.has(i.only)
        ]
    terms = base.table("record_terms")
    statements.append(
        SQLITE_DDL.change(described.AddColumn("record_terms", terms.column("entity_keys")))[0]
    )
    statements.append(SQLITE_DDL.create_table(base.table("pending_purges")))
    statements.append(seed_meta(["generation"]).replace("INSERT INTO", "INSERT OR IGNORE INTO"))
    return script(statements, "v5: every key begins with the tenant and agent")


V5 = _v5()
# v6 on: the changes both stores make (cairn.storage.sql.schema.STEPS).
MIGRATIONS: tuple[tuple[int, str], ...] = (
    *HISTORY,
    (5, V5),
    *(
        (
            version,
            script([s for c in changes for s in SQLITE_DDL.change(c)], f"v{version}: {summary}"),
        )
        for version, summary, changes in described.STEPS
    ),
)
LATEST_VERSION = MIGRATIONS[-1][0]
