import Foundation

/// What the handles (`Download`, `DownloadGroup`) need of the session that made them, beyond
/// the public `DownloadSession` methods: waits that honour cancellation, and live streams of
/// one download or one group. Each session answers from where its downloads live: the
/// manager from memory, the background session from the daemon.
protocol SessionBackend: DownloadSession {
    /// Returns once the download has finished (completed, failed or canceled), at once if it
    /// has. Throws `.waitCanceled` when the waiting task is canceled, `.shutdown` when the
    /// session closes first, `.unknownDownload` when there is no such download.
    func waitUntilFinished(_ id: DownloadID) async throws(HaulError) -> DownloadInfo

    /// The download's progress as it changes, ending when it finishes.
    nonisolated func progressUpdates(of id: DownloadID) -> AsyncStream<TransferProgress>

    /// The events about one download, from now on, ending when it finishes.
    nonisolated func events(of id: DownloadID) -> HaulSequence<DownloadEvent>

    /// The group's members by outcome now.
    func summary(ofGroup name: String) async throws(HaulError) -> GroupSummary

    /// Returns once every member of the group has finished, with its summary; throws as
    /// `waitUntilFinished` does.
    func waitUntilCompleted(group name: String) async throws(HaulError) -> GroupSummary

    /// Every member's result: those finished already first, then each as it finishes; ends
    /// when the group has completed.
    nonisolated func results(ofGroup name: String) -> HaulSequence<DownloadResult>

    /// The members' progress summed now.
    func progress(ofGroup name: String) async throws(HaulError) -> TransferProgress

    /// The members, in the order they were added.
    func members(ofGroup name: String) async throws(HaulError) -> [DownloadInfo]
}
