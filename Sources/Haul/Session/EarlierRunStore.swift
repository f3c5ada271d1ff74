import Foundation

/// A session's store opened before its manager, so that a run of `haul get` can ask which of
/// its files an earlier run placed and nobody changed since, and open a manager on the same
/// store only when something is left to do.
///
/// Why: a re-run that finds every file in place has nothing to fetch, yet a manager costs a
/// process an HTTP client and its event loop threads, the reload of every unfinished download
/// and an actor hop per step (issue 26, job (h): 5,000 files present, target 0.15 s). Opened
/// this way, such a run makes none of them: the store is opened, pruned by the retention rule
/// exactly as the manager's opening prunes it (so a row the manager would have forgotten is
/// not found here either), and asked once per directory.
///
/// What a run that stops here leaves undone until the next manager opens this session: placing
/// the files a killed process verified (`.haul-KEY.done`) and canceling downloads abandoned
/// for longer than the rule allows. Neither loses anything by waiting: the rows and the
/// files stay as they are, and a request for any of them finds an unfinished download, which
/// this look-up never answers for (it goes to the manager, which finishes it first).
package struct EarlierRunStore: Sendable {
    let store: any DownloadStoring
    package let session: String
    let retention: DownloadManager.Retention

    /// Opens the store in `stateDirectory` (created if needed) and prunes `session`'s finished
    /// downloads beyond `retention`, as `DownloadManager.open` would first.
    package static func open(
        stateDirectory: URL, session: String, retention: DownloadManager.Retention
    ) async throws(HaulError) -> EarlierRunStore {
        let store = try await StoreLocation.directory(stateDirectory).open()
        try await store.prune(session: session, retention: retention)
        return EarlierRunStore(store: store, session: session, retention: retention)
    }

    /// For each request, the earlier download whose file is still the one placed, as
    /// `DownloadManager.intactEarlierDownloads(of:)` answers it; all nil when the rule keeps
    /// finished downloads in memory (a manager finds them there instead).
    package func intactEarlierDownloads(of requests: [DownloadRequest]) async throws(HaulError) -> [DownloadInfo?] {
        try await lookUpEarlier(of: requests).intact
    }

    /// `intactEarlierDownloads(of:)`, with what it found of the other requests' earlier
    /// downloads, for the manager's `add` to take instead of looking them up again. Finds
    /// nothing when the rule keeps finished downloads in memory.
    package func lookUpEarlier(of requests: [DownloadRequest]) async throws(HaulError) -> DownloadManager.EarlierLookup {
        guard !retention.loadsEarlierFinished else {
            return DownloadManager.EarlierLookup(intact: [DownloadInfo?](repeating: nil, count: requests.count), rest: nil)
        }
        return try await DownloadManager.lookUpEarlier(of: requests, in: store, session: session)
    }
}

extension DownloadManager {
    /// `open(stateDirectory:…)` on a store already opened (and pruned) for the same session.
    /// The configuration's retention should be the one the store was opened with.
    package static func open(
        _ opened: EarlierRunStore, configuration: Configuration, continueInterrupted: Bool
    ) async throws(HaulError) -> DownloadManager {
        let manager = DownloadManager(configuration: configuration, store: opened.store, session: opened.session)
        try await manager.restore(continueInterrupted: continueInterrupted)
        await manager.startFleet()
        return manager
    }
}
