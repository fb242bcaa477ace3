-- @@ cairn schema version 1
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
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'policy', 'profile', 'episode', 'skill', 'topic')),
    memory_type TEXT NOT NULL CHECK (memory_type IN ('semantic', 'episodic', 'procedural', 'working')),
    tags TEXT NOT NULL DEFAULT '[]',
    language TEXT,
    authority TEXT NOT NULL CHECK (authority IN ('explicit', 'inferred')),
    origin TEXT NOT NULL CHECK (origin IN ('user', 'tool', 'review', 'reflection', 'import', 'system')),
    trust TEXT NOT NULL CHECK (trust IN ('system', 'learned', 'external')),
    scope TEXT NOT NULL CHECK (scope IN ('global', 'project')),
    project_id TEXT,
    path_patterns TEXT NOT NULL DEFAULT '[]',
    operations TEXT NOT NULL DEFAULT '[]',
    phases TEXT NOT NULL DEFAULT '[]',
    task_types TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL CHECK (state IN ('trial', 'proven', 'superseded', 'candidate', 'active', 'stale', 'archived')),
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
    source TEXT NOT NULL DEFAULT '{}',
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
    reason TEXT NOT NULL CHECK (reason IN ('user-remove', 'markdown-delete', 'negative-feedback')),
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

-- @@ cairn schema version 2
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

-- @@ cairn schema version 3
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

-- @@ cairn schema version 4
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

-- @@ cairn schema version 5
-- v5: every key begins with the tenant and agent (SPEC §3): events, record versions,
-- tombstones and applications. An id of another tenant is unknown; no import or replay
-- in one tenant can touch, shadow or block a row of another.
CREATE TABLE events_v5 (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    episode_id TEXT,
    session_id TEXT,
    sender TEXT,
    caused_by TEXT,
    supersedes TEXT,
    payload TEXT NOT NULL,
    UNIQUE (tenant, agent, event_id)
);
INSERT INTO events_v5(seq, tenant, agent, event_id, type, occurred_at, recorded_at,
    episode_id, session_id, sender, caused_by, supersedes, payload)
    SELECT seq, tenant, agent, event_id, type, occurred_at, recorded_at, episode_id,
    session_id, sender, caused_by, supersedes, payload FROM events ORDER BY seq;
DROP TABLE events;
ALTER TABLE events_v5 RENAME TO events;
CREATE INDEX events_by_tenant ON events(tenant, agent, seq);

CREATE TABLE records_v5 (
    row INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    title TEXT,
    body TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'policy', 'profile', 'episode', 'skill', 'topic')),
    memory_type TEXT NOT NULL CHECK (memory_type IN ('semantic', 'episodic', 'procedural', 'working')),
    tags TEXT NOT NULL DEFAULT '[]',
    language TEXT,
    authority TEXT NOT NULL CHECK (authority IN ('explicit', 'inferred')),
    origin TEXT NOT NULL CHECK (origin IN ('user', 'tool', 'review', 'reflection', 'import', 'system')),
    trust TEXT NOT NULL CHECK (trust IN ('system', 'learned', 'external')),
    scope TEXT NOT NULL CHECK (scope IN ('global', 'project')),
    project_id TEXT,
    path_patterns TEXT NOT NULL DEFAULT '[]',
    operations TEXT NOT NULL DEFAULT '[]',
    phases TEXT NOT NULL DEFAULT '[]',
    task_types TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL CHECK (state IN ('trial', 'proven', 'superseded', 'candidate', 'active', 'stale', 'archived')),
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
    importance REAL NOT NULL DEFAULT 0.5,
    evidence TEXT NOT NULL DEFAULT '[]',
    source TEXT NOT NULL DEFAULT '{}',
    external_ref TEXT,
    episode_id TEXT,
    position INTEGER,
    occurred_at TEXT,
    recorded_at TEXT NOT NULL,
    valid_to TEXT,
    expired_at TEXT,
    supersedes INTEGER,
    superseded_by INTEGER,
    text_hash TEXT NOT NULL,
    change_seq INTEGER NOT NULL DEFAULT 0,
    entities_linked INTEGER NOT NULL DEFAULT 1,
    rank_hint REAL NOT NULL DEFAULT 0,
    live INTEGER GENERATED ALWAYS AS (
        superseded_by IS NULL AND evicted_at IS NULL AND forgotten_at IS NULL
        AND purged = 0 AND state <> 'superseded'
    ) VIRTUAL,
    UNIQUE (tenant, agent, id, version),
    -- Documents that cairn learned itself can never claim the operator's trust.
    CHECK (NOT (trust = 'system' AND origin IN ('reflection', 'review')))
);
INSERT INTO records_v5(row, tenant, agent, id, version, title, body, kind, memory_type, tags,
    language, authority, origin, trust, scope, project_id, path_patterns, operations, phases,
    task_types, state, pinned, evicted_at, forgotten_at, purged, proof_count, failure_count,
    used_count, ignored_count, last_applied_at, last_success_at, confidence, importance,
    evidence, source, external_ref, episode_id, position, occurred_at, recorded_at, valid_to,
    expired_at, supersedes, superseded_by, text_hash, change_seq, entities_linked)
    SELECT row, tenant, agent, id, version, title, body, kind, memory_type, tags,
    language, authority, origin, trust, scope, project_id, path_patterns, operations, phases,
    task_types, state, pinned, evicted_at, forgotten_at, purged, proof_count, failure_count,
    used_count, ignored_count, last_applied_at, last_success_at, confidence, importance,
    evidence, source, external_ref, episode_id, position, occurred_at, recorded_at, valid_to,
    expired_at, supersedes, superseded_by, text_hash, change_seq, entities_linked
    FROM records ORDER BY row;
DROP TABLE records;
ALTER TABLE records_v5 RENAME TO records;
CREATE INDEX records_current ON records(tenant, agent, id, superseded_by);
CREATE INDEX records_changes ON records(change_seq);
CREATE INDEX records_ref ON records(tenant, agent, external_ref);
CREATE INDEX records_episode ON records(tenant, agent, episode_id, position);
CREATE INDEX records_unlinked ON records(agent) WHERE NOT entities_linked;
CREATE INDEX records_rules ON records(tenant, agent, rank_hint) WHERE live;

CREATE TABLE tombstones_v5 (
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    record_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    project_id TEXT,
    text_hash TEXT NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN ('user-remove', 'markdown-delete', 'negative-feedback')),
    permanent INTEGER NOT NULL DEFAULT 0,
    removed_at TEXT NOT NULL,
    restored_at TEXT,
    PRIMARY KEY (tenant, agent, record_id)
);
INSERT INTO tombstones_v5 SELECT tenant, agent, record_id, scope, project_id, text_hash,
    reason, permanent, removed_at, restored_at FROM tombstones;
DROP TABLE tombstones;
ALTER TABLE tombstones_v5 RENAME TO tombstones;
CREATE INDEX tombstones_hash ON tombstones(tenant, agent, text_hash);

CREATE TABLE applications_v5 (
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    application_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    record_version INTEGER NOT NULL,
    task TEXT,
    delivery TEXT NOT NULL CHECK (delivery IN ('resident', 'manifest', 'expanded', 'recall')),
    why_applied TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    outcome TEXT CHECK (outcome IS NULL OR outcome IN ('used-successfully', 'ignored', 'overridden', 'corrected', 'contributed-to-failure')),
    outcome_at TEXT,
    session_id TEXT,
    PRIMARY KEY (tenant, agent, application_id)
);
INSERT INTO applications_v5 SELECT tenant, agent, application_id, record_id, record_version,
    task, delivery, why_applied, created_at, outcome, outcome_at, NULL FROM applications;
DROP TABLE applications;
ALTER TABLE applications_v5 RENAME TO applications;
CREATE INDEX applications_record ON applications(tenant, agent, record_id);

-- Entity keys move beside the keyword terms, hashed, so a purge that deletes a row's
-- terms deletes its entity keys too (the entities table kept every key in plain text).
ALTER TABLE record_terms ADD COLUMN entity_keys BLOB;

-- A permanent forget is noted here in its own transaction and cleared when every file
-- under the home is clean, so a kill in between is finished on the next open.
CREATE TABLE pending_purges (
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (tenant, agent, record_id)
);
INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', '0');

-- @@ cairn schema version 6
-- v6, learning: who judged each application's outcome (the failure corroboration gate
-- counts independent sessions and deterministic sources), telemetry counters (counts
-- only, never content), and the journal by event type (cursors, last runs).
ALTER TABLE applications ADD COLUMN outcome_source TEXT
    CHECK (outcome_source IS NULL OR outcome_source IN ('owner', 'deterministic', 'observed', 'untrusted'));
ALTER TABLE applications ADD COLUMN outcome_session TEXT;
CREATE TABLE telemetry (
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    name TEXT NOT NULL,
    value REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, agent, name)
);
CREATE INDEX events_by_type ON events(tenant, agent, type, seq);
CREATE INDEX records_sweep ON records(tenant, agent, failure_count) WHERE live;

-- @@ cairn schema version 7
-- v7, the dashboard: a tenant's live memories, newest (or oldest) first, a page at a
-- time, walked in order instead of sorting every memory of the tenant; the journal by
-- session and by episode.
CREATE INDEX records_recent ON records(tenant, agent, recorded_at, id) WHERE live;
CREATE INDEX events_by_session ON events(tenant, agent, session_id, seq);
CREATE INDEX events_by_episode ON events(tenant, agent, episode_id, seq);
-- The director's rules by the engine's rank hint, ties by id, walked in that order (the
-- hint alone left every tie of a 100k tenant to be sorted for each task).
DROP INDEX records_rules;
CREATE INDEX records_rules ON records(tenant, agent, rank_hint DESC, id) WHERE live;

-- @@ cairn schema version 8
-- v8: a write's duplicate check looks a body up by its hash, which scanned every memory
-- of the tenant (about 15 ms per remember at 10,000 memories, ten times that at 100k).
-- Listings come ordered by (recorded_at, id): the index holds that order too, or the
-- planner walks records_recent for the order and tests every row's hash.
CREATE INDEX records_hash ON records(tenant, agent, text_hash, recorded_at, id);
