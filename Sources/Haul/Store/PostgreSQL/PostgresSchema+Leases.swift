/// Schema version 2: what a fleet of daemons on one database needs to share a session's queue
/// (see `docs/fleet.md`). Additive: no existing column changes meaning, and a daemon that
/// never claims leaves the new columns alone.
extension PostgresSchema {
    /// The columns and indexes of leases.
    ///
    /// - `leaseOwner`: the daemon (its ID, new at every start) that runs the download, or NULL.
    /// - `leaseUntil`: when that lease ends, by the database's clock (`now()`); a daemon's own
    ///   clock never decides who holds a download. NULL when nobody holds it.
    /// - `leaseEpoch`: the fencing token, incremented by every claim and never reset, so a
    ///   write carrying an older epoch is about a lease that was taken over since.
    /// - `host`: the URL's host, lower case, without port or brackets (`''` when it has
    ///   none), computed by the server, for the per-host limit counted across the fleet.
    ///   Generated from `url`, so every writer agrees on it without writing it.
    static let leaseVersion = [
        "ALTER TABLE haul.download ADD COLUMN leaseOwner text",
        "ALTER TABLE haul.download ADD COLUMN leaseUntil timestamptz",
        "ALTER TABLE haul.download ADD COLUMN leaseEpoch bigint NOT NULL DEFAULT 0",
        """
        ALTER TABLE haul.download ADD COLUMN host text GENERATED ALWAYS AS (
            COALESCE(lower(btrim(substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]*\\]|[^:/?#]*)'), '[]')), '')
        ) STORED
        """,
        // A lease is held exactly when both are set; a release clears both.
        """
        ALTER TABLE haul.download ADD CONSTRAINT download_lease_whole
            CHECK ((leaseOwner IS NULL) = (leaseUntil IS NULL))
        """,
        // The claim's scan: a session's queued and running downloads in queue order.
        """
        CREATE INDEX download_claim_order ON haul.download (session, priority DESC, position, id)
            WHERE state IN ('queued', 'running')
        """,
        // Counting a session's live leases per host, and a daemon's leases.
        "CREATE INDEX download_session_leased ON haul.download (session, host) WHERE leaseOwner IS NOT NULL",
        "CREATE INDEX download_lease_owner ON haul.download (leaseOwner) WHERE leaseOwner IS NOT NULL",
    ]
}
