import Foundation
import NIOConcurrencyHelpers

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
/// The prune waits for the look-up to need it. A batch into directories the session never
/// used (a fresh store, a run into a new dated folder) finds nothing whatever the prune
/// deletes, so its prune is deferred (`finishDeferredPrune`) until the batch's transfers run:
/// at the retention bound it deletes a run's worth of rows, tens of milliseconds of the
/// store's writer during which nothing else could start (job (e)).
///
/// A file found in place is in use: its download is marked so (`StoreWrite.markInUse`) once it
/// has counted as added for half the age rule, so that the age rule forgets a download when no
/// run asked for its file for that long, not when it was first placed. Without it a nightly
/// `haul get` over the same files forgot them all on the 31st night and fetched them again,
/// each placed beside the old one by the `rename` policy. A download marked takes the end of
/// the insertion order with today's date, one write for the batch, at most once per half of
/// the age rule (15 days for `haul get`): every other re-run writes nothing for its files.
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
    private let pruning: PruneProgress

    /// Where the prune by `retention` stands.
    enum PruneStage: Sendable {
        /// Not made yet: a look-up that reads rows, or the manager's opening, makes it first.
        case due
        /// Not needed before the batch starts (nothing it looked up lies in a used directory).
        case deferred
        case done
    }

    final class PruneProgress: Sendable {
        let stage = NIOLockedValueBox(PruneStage.due)
    }

    /// Opens the store in `stateDirectory` (created if needed). Its finished downloads beyond
    /// `retention` are pruned before anything reads them (see the type's notes).
    package static func open(
        stateDirectory: URL, session: String, retention: DownloadManager.Retention
    ) async throws(HaulError) -> EarlierRunStore {
        let store = try await StoreLocation.directory(stateDirectory).open()
        return EarlierRunStore(store: store, session: session, retention: retention, pruning: PruneProgress())
    }

    /// For each request, the earlier download whose file is still the one placed, as
    /// `DownloadManager.intactEarlierDownloads(of:)` answers it; all nil when the rule keeps
    /// finished downloads in memory (a manager finds them there instead).
    package func intactEarlierDownloads(of requests: [DownloadRequest]) async throws(HaulError) -> [DownloadInfo?] {
        try await lookUpEarlier(of: requests).intact
    }

    /// `intactEarlierDownloads(of:)`, with what it found of the other requests' earlier
    /// downloads, for the manager's `add` to take instead of looking them up again. Finds
    /// nothing when the rule keeps finished downloads in memory. The intact downloads added
    /// longer ago than half the age rule are marked in use (see the type's notes).
    package func lookUpEarlier(of requests: [DownloadRequest]) async throws(HaulError) -> DownloadManager.EarlierLookup {
        guard !retention.loadsEarlierFinished else {
            return DownloadManager.EarlierLookup(intact: [DownloadInfo?](repeating: nil, count: requests.count), rest: nil)
        }
        let now = Date()
        let cutoff = retention.maxAge.map { now.addingTimeInterval(-$0.inSeconds / 2) }
        let found = try await DownloadManager.lookUpEarlier(of: requests, in: store, session: session, inUseCutoff: cutoff) {
            () async throws(HaulError) in
            try await pruneUnlessDone()
        }
        // Nothing was read: the rows the prune deletes can wait.
        pruning.stage.withLockedValue { if $0 == .due { $0 = .deferred } }
        if !found.addedBeforeCutoff.isEmpty {
            try await store.submit(.markInUse(found.addedBeforeCutoff, at: now))
        }
        return found
    }

    /// Makes the prune a look-up deferred; does nothing otherwise. Call it once the batch's
    /// transfers started, so that its writes are not what they wait for.
    package func finishDeferredPrune() async throws(HaulError) {
        guard pruning.stage.withLockedValue({ $0 }) == .deferred else { return }
        try await pruneUnlessDone()
    }

    private func pruneUnlessDone() async throws(HaulError) {
        guard pruning.stage.withLockedValue({ $0 }) != .done else { return }
        try await store.prune(session: session, retention: retention)
        pruning.stage.withLockedValue { $0 = .done }
    }

    /// Whether a manager opened on this store must prune it first, as its opening does; if
    /// so, the prune counts as made from then on.
    func claimPruneForManager() -> Bool {
        pruning.stage.withLockedValue { stage in
            guard stage == .due else { return false }
            // The manager's opening makes it.
            stage = .done
            return true
        }
    }
}

extension DownloadManager {
    /// `open(stateDirectory:…)` on a store already opened for the same session. The
    /// configuration's retention should be the one the store was opened with.
    package static func open(
        _ opened: EarlierRunStore, configuration: Configuration, continueInterrupted: Bool
    ) async throws(HaulError) -> DownloadManager {
        let manager = DownloadManager(configuration: configuration, store: opened.store, session: opened.session)
        try await manager.restore(continueInterrupted: continueInterrupted, pruning: opened.claimPruneForManager())
        await manager.startFleet()
        return manager
    }
}
