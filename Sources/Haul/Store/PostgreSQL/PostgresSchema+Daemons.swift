/// Schema version 3: who is alive in a fleet of daemons on one database, for the dashboard and
/// the metrics (see `docs/fleet.md`). A table of a few rows: one per running daemon; rows of
/// daemons that stopped beating age out (`PostgresDaemonPresence`).
extension PostgresSchema {
    /// - `id`: the daemon's fleet ID (new at every start);
    /// - `host`, `pid`: where it runs, for a person reading the table;
    /// - `started`, `lastSeen`: by the database's clock, as leases are, so daemons with skewed
    ///   clocks agree on who is alive. `lastSeen` moves at every heartbeat.
    static let daemonVersion = [
        """
        CREATE TABLE haul.daemon (
            id text PRIMARY KEY,
            host text NOT NULL,
            pid integer NOT NULL,
            started timestamptz NOT NULL DEFAULT now(),
            lastSeen timestamptz NOT NULL DEFAULT now()
        )
        """,
    ]
}
