-- The columns and indexes of haul.download that claims, renewals and completions touch, as
-- PostgresSchema (version 1) and PostgresSchema+Leases (version 2) create them. Keep in step
-- with Sources/Haul/Store/PostgreSQL/PostgresSchema*.swift.
CREATE SCHEMA haul;
CREATE TABLE haul.session (id text PRIMARY KEY, createdAt double precision NOT NULL, settings text);
CREATE TABLE haul.downloadGroup (
    session text NOT NULL REFERENCES haul.session ON DELETE CASCADE, name text NOT NULL,
    createdAt double precision NOT NULL, ordinal bigint GENERATED ALWAYS AS IDENTITY, PRIMARY KEY (session, name));
CREATE TABLE haul.download (
    id bigint PRIMARY KEY,
    session text NOT NULL REFERENCES haul.session ON DELETE CASCADE,
    groupName text, position bigint NOT NULL, priority bigint NOT NULL, state text NOT NULL, url text NOT NULL,
    durableOffset bigint NOT NULL DEFAULT 0, updatedAt double precision NOT NULL DEFAULT 0,
    leaseOwner text, leaseUntil timestamptz, leaseEpoch bigint NOT NULL DEFAULT 0,
    host text GENERATED ALWAYS AS (
        COALESCE(lower(btrim(substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\[[^]]*\]|[^:/?#]*)'), '[]')), '')) STORED,
    CHECK ((leaseOwner IS NULL) = (leaseUntil IS NULL)),
    FOREIGN KEY (session, groupName) REFERENCES haul.downloadGroup (session, name) ON DELETE CASCADE);
CREATE INDEX download_session_state_priority_position ON haul.download (session, state, priority, position);
CREATE INDEX download_session_group ON haul.download (session, groupName);
CREATE INDEX download_claim_order ON haul.download (session, priority DESC, position, id) WHERE state IN ('queued', 'running');
CREATE INDEX download_session_leased ON haul.download (session, host) WHERE leaseOwner IS NOT NULL;
CREATE INDEX download_lease_owner ON haul.download (leaseOwner) WHERE leaseOwner IS NOT NULL;
