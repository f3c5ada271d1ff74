/// Schema version 4: the index behind a fleet's listing of finished downloads on any daemon
/// (aria2 `tellStopped`, `getGlobalStat`'s `numStopped`; see `docs/fleet.md`).
extension PostgresSchema {
    /// A session's finished downloads in the order they were added, partial on the finished
    /// states: a page of the newest ones, or a count capped at the listing's window, reads that
    /// many index entries whatever the unfinished queue or the history beyond the window hold.
    static let finishedViewVersion = [
        """
        CREATE INDEX download_session_finished_ordinal ON haul.download (session, ordinal)
        WHERE state IN ('completed', 'failed', 'canceled')
        """,
    ]
}
