-- @@ cairn schema version 5
CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
INSERT INTO meta(key, value) VALUES ('change_seq', '0'), ('generation', '0');

CREATE TABLE events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    type text COLLATE "C" NOT NULL,
    occurred_at text COLLATE "C" NOT NULL,
    recorded_at text COLLATE "C" NOT NULL,
    episode_id text COLLATE "C",
    session_id text COLLATE "C",
    sender text COLLATE "C",
    caused_by text COLLATE "C",
    supersedes text COLLATE "C",
    payload text NOT NULL,
    -- The record an event is about, so a permanent forget finds its journal copies by
    -- index (the same paths SQLite's purge reads with json_extract).
    record_ref text COLLATE "C" GENERATED ALWAYS AS (
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
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    title text,
    body text NOT NULL,
    kind text COLLATE "C" NOT NULL CHECK (kind IN ('fact', 'preference', 'policy', 'profile', 'episode', 'skill', 'topic')),
    memory_type text COLLATE "C" NOT NULL CHECK (memory_type IN ('semantic', 'episodic', 'procedural', 'working')),
    tags text NOT NULL DEFAULT '[]',
    language text COLLATE "C",
    authority text COLLATE "C" NOT NULL CHECK (authority IN ('explicit', 'inferred')),
    origin text COLLATE "C" NOT NULL CHECK (origin IN ('user', 'tool', 'review', 'reflection', 'import', 'system')),
    trust text COLLATE "C" NOT NULL CHECK (trust IN ('system', 'learned', 'external')),
    scope text COLLATE "C" NOT NULL CHECK (scope IN ('global', 'project')),
    project_id text COLLATE "C",
    path_patterns text NOT NULL DEFAULT '[]',
    operations text NOT NULL DEFAULT '[]',
    phases text NOT NULL DEFAULT '[]',
    task_types text NOT NULL DEFAULT '[]',
    state text COLLATE "C" NOT NULL CHECK (state IN ('trial', 'proven', 'superseded', 'candidate', 'active', 'stale', 'archived')),
    pinned boolean NOT NULL DEFAULT false,
    evicted_at text COLLATE "C",
    forgotten_at text COLLATE "C",
    purged boolean NOT NULL DEFAULT false,
    proof_count integer NOT NULL DEFAULT 0,
    failure_count integer NOT NULL DEFAULT 0,
    used_count integer NOT NULL DEFAULT 0,
    ignored_count integer NOT NULL DEFAULT 0,
    last_applied_at text COLLATE "C",
    last_success_at text COLLATE "C",
    confidence double precision NOT NULL DEFAULT 1.0,
    importance double precision NOT NULL DEFAULT 0.5,
    evidence text NOT NULL DEFAULT '[]',
    source text NOT NULL DEFAULT '{}',
    external_ref text COLLATE "C",
    episode_id text COLLATE "C",
    position integer,
    occurred_at text COLLATE "C",
    recorded_at text COLLATE "C" NOT NULL,
    valid_to text COLLATE "C",
    expired_at text COLLATE "C",
    supersedes integer,
    superseded_by integer,
    text_hash text COLLATE "C" NOT NULL,
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
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    record_id text COLLATE "C" NOT NULL,
    scope text COLLATE "C" NOT NULL,
    project_id text COLLATE "C",
    text_hash text COLLATE "C" NOT NULL,
    reason text COLLATE "C" NOT NULL CHECK (reason IN ('user-remove', 'markdown-delete', 'negative-feedback')),
    permanent boolean NOT NULL DEFAULT false,
    removed_at text COLLATE "C" NOT NULL,
    restored_at text COLLATE "C",
    PRIMARY KEY (tenant, agent, record_id)
);
CREATE INDEX tombstones_hash ON tombstones(tenant, agent, text_hash);

CREATE TABLE applications (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    application_id text COLLATE "C" NOT NULL,
    record_id text COLLATE "C" NOT NULL,
    record_version integer NOT NULL,
    task text,
    delivery text COLLATE "C" NOT NULL CHECK (delivery IN ('resident', 'manifest', 'expanded', 'recall')),
    why_applied text NOT NULL DEFAULT '[]',
    created_at text COLLATE "C" NOT NULL,
    outcome text COLLATE "C" CHECK (outcome IS NULL OR outcome IN ('used-successfully', 'ignored', 'overridden', 'corrected', 'contributed-to-failure')),
    outcome_at text COLLATE "C",
    session_id text COLLATE "C",
    PRIMARY KEY (tenant, agent, application_id)
);
CREATE INDEX applications_record ON applications(tenant, agent, record_id);

CREATE TABLE pending_purges (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    record_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, agent, record_id)
);

CREATE TABLE record_terms (
    row bigint PRIMARY KEY,
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    length integer NOT NULL,
    keys bytea NOT NULL,
    counts bytea NOT NULL,
    entity_keys bytea
);

CREATE TABLE vectors (
    row bigint PRIMARY KEY,
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    project_id text COLLATE "C",
    live boolean NOT NULL,
    model text COLLATE "C" NOT NULL,
    dim integer NOT NULL,
    vec vector NOT NULL
);
CREATE INDEX vectors_partition ON vectors(tenant, agent);

CREATE TABLE postings (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    term bigint NOT NULL,
    row bigint NOT NULL,
    tf integer NOT NULL,
    length integer NOT NULL,
    live boolean NOT NULL,
    project_id text COLLATE "C",
    PRIMARY KEY (tenant, agent, term, row)
);

CREATE TABLE term_stats (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    term bigint NOT NULL,
    df integer NOT NULL,
    PRIMARY KEY (tenant, agent, term)
);

CREATE TABLE partition_stats (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    documents bigint NOT NULL,
    length bigint NOT NULL,
    PRIMARY KEY (tenant, agent)
);

CREATE TABLE entity_links (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    key bigint NOT NULL,
    row bigint NOT NULL,
    PRIMARY KEY (tenant, agent, key, row)
);

ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE events FORCE ROW LEVEL SECURITY;
CREATE POLICY events_read ON events FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY events_insert ON events FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY events_update ON events FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY events_delete ON events FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE records ENABLE ROW LEVEL SECURITY;
ALTER TABLE records FORCE ROW LEVEL SECURITY;
CREATE POLICY records_read ON records FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY records_insert ON records FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY records_update ON records FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY records_delete ON records FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE tombstones FORCE ROW LEVEL SECURITY;
CREATE POLICY tombstones_read ON tombstones FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY tombstones_insert ON tombstones FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY tombstones_update ON tombstones FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY tombstones_delete ON tombstones FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE applications ENABLE ROW LEVEL SECURITY;
ALTER TABLE applications FORCE ROW LEVEL SECURITY;
CREATE POLICY applications_read ON applications FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY applications_insert ON applications FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY applications_update ON applications FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY applications_delete ON applications FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE pending_purges ENABLE ROW LEVEL SECURITY;
ALTER TABLE pending_purges FORCE ROW LEVEL SECURITY;
CREATE POLICY pending_purges_read ON pending_purges FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY pending_purges_insert ON pending_purges FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY pending_purges_update ON pending_purges FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY pending_purges_delete ON pending_purges FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE record_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE record_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY record_terms_read ON record_terms FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY record_terms_insert ON record_terms FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY record_terms_update ON record_terms FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY record_terms_delete ON record_terms FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE vectors ENABLE ROW LEVEL SECURITY;
ALTER TABLE vectors FORCE ROW LEVEL SECURITY;
CREATE POLICY vectors_read ON vectors FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY vectors_insert ON vectors FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY vectors_update ON vectors FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY vectors_delete ON vectors FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE postings ENABLE ROW LEVEL SECURITY;
ALTER TABLE postings FORCE ROW LEVEL SECURITY;
CREATE POLICY postings_read ON postings FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY postings_insert ON postings FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY postings_update ON postings FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY postings_delete ON postings FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE term_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE term_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY term_stats_read ON term_stats FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY term_stats_insert ON term_stats FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY term_stats_update ON term_stats FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY term_stats_delete ON term_stats FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE partition_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE partition_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY partition_stats_read ON partition_stats FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY partition_stats_insert ON partition_stats FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY partition_stats_update ON partition_stats FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY partition_stats_delete ON partition_stats FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

ALTER TABLE entity_links ENABLE ROW LEVEL SECURITY;
ALTER TABLE entity_links FORCE ROW LEVEL SECURITY;
CREATE POLICY entity_links_read ON entity_links FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY entity_links_insert ON entity_links FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY entity_links_update ON entity_links FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY entity_links_delete ON entity_links FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

-- @@ cairn schema version 6
-- v6, learning (as SQLite's v6): who judged each application's outcome, telemetry
-- counters (counts only), the journal by event type.
ALTER TABLE applications ADD COLUMN outcome_source text COLLATE "C"
    CHECK (outcome_source IS NULL OR outcome_source IN ('owner', 'deterministic', 'observed', 'untrusted'));
ALTER TABLE applications ADD COLUMN outcome_session text COLLATE "C";
CREATE TABLE telemetry (
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    value double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, agent, name)
);
CREATE INDEX events_by_type ON events(tenant, agent, type, seq);
CREATE INDEX records_sweep ON records(tenant, agent, failure_count) WHERE live;

ALTER TABLE telemetry ENABLE ROW LEVEL SECURITY;
ALTER TABLE telemetry FORCE ROW LEVEL SECURITY;
CREATE POLICY telemetry_read ON telemetry FOR SELECT USING (tenant = current_setting('cairn.tenant', true) OR current_setting('cairn.every_tenant', true) = 'on');
CREATE POLICY telemetry_insert ON telemetry FOR INSERT WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY telemetry_update ON telemetry FOR UPDATE USING (tenant = current_setting('cairn.tenant', true)) WITH CHECK (tenant = current_setting('cairn.tenant', true));
CREATE POLICY telemetry_delete ON telemetry FOR DELETE USING (tenant = current_setting('cairn.tenant', true));

-- @@ cairn schema version 7
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

-- @@ cairn schema version 8
-- v8 (as SQLite's v8): a write's duplicate check finds a body by its hash through an
-- index, in the listing's order, instead of scanning every memory of the tenant.
CREATE INDEX records_hash ON records(tenant, agent, text_hash, recorded_at, id);
