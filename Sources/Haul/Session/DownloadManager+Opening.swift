import Foundation

/// Opening a session of a store for the `haul` tool and the daemon: a state directory's SQLite
/// file or a PostgreSQL database, its downloads found again and reconciled with the disk.
extension DownloadManager {
    /// Opens the store in `stateDirectory` (created if needed; default `$XDG_STATE_HOME/haul`),
    /// finds the session's downloads again and reconciles each with what is on disk. Those that
    /// were running or queued continue (or, with `continueInterrupted: false`, wait paused
    /// until resumed or added again); paused ones stay paused.
    package static func open(
        stateDirectory: URL = DownloadManager.defaultStateDirectory,
        session: String = "default",
        configuration: Configuration = Configuration(),
        continueInterrupted: Bool = true
    ) async throws(HaulError) -> DownloadManager {
        try await open(store: .directory(stateDirectory), session: session, configuration: configuration,
                       continueInterrupted: continueInterrupted)
    }

    /// `open(stateDirectory:…)` on any store: a state directory's SQLite file or a PostgreSQL
    /// database. A PostgreSQL server that does not answer is tried again for up to
    /// `waitingUpTo` (see `StoreLocation.open`).
    package static func open(
        store location: StoreLocation,
        waitingUpTo wait: Duration = .zero,
        session: String = "default",
        configuration: Configuration = Configuration(),
        continueInterrupted: Bool = true
    ) async throws(HaulError) -> DownloadManager {
        let store = try await location.open(waitingUpTo: wait)
        let manager = DownloadManager(configuration: configuration, store: store, session: session)
        try await manager.restore(continueInterrupted: continueInterrupted)
        await manager.startFleet()
        return manager
    }
}
