import Haul

/// Which of aria2's notifications a download event calls for, in aria2's order. A value type:
/// events in, notification names out, tested without I/O.
///
/// aria2 announces only downloads that became active:
/// - `onDownloadStart` once per run, when the download becomes active (`activated`: it took a
///   slot, and `tellStatus` says `active` from then on), not when the server first answers: a
///   client that saw it active and removes it before that answer gets its Stop. A retry
///   inside a run is not a new start; a resume after a pause is;
/// - a download that ends without having been announced still gets `onDownloadStart` first,
///   then `onDownloadError` or `onDownloadComplete`;
/// - `onDownloadPause` and `onDownloadStop` only for a download that was announced: adding
///   with `pause=true`, pausing or removing a download that never became active sends nothing.
///
/// Bounded: a download is remembered from its start until it ends (completes, fails or is
/// removed), so the sets hold at most the unfinished downloads.
struct Aria2EventOrder: Sendable {
    /// Announced and running (a Start was sent for this run).
    private(set) var running: Set<DownloadID> = []
    /// Announced at some point and not ended since (running or paused after starting).
    private(set) var announced: Set<DownloadID> = []

    /// The notifications `event` calls for, in order (often none).
    mutating func notifications(for event: ManagerEvent) -> [(String, DownloadID)] {
        switch event {
        case .activated(let id), .started(let id, _, _):
            announced.insert(id)
            return running.insert(id).inserted ? [("aria2.onDownloadStart", id)] : []
        case .paused(let id, _):
            running.remove(id)
            return announced.contains(id) ? [("aria2.onDownloadPause", id)] : []
        case .canceled(let id, _):
            running.remove(id)
            return announced.remove(id) != nil ? [("aria2.onDownloadStop", id)] : []
        case .completed(let info):
            return ended(info.id, "aria2.onDownloadComplete")
        case .failed(let info):
            return ended(info.id, "aria2.onDownloadError")
        case .queued, .checkpointed, .progress, .retrying, .resumed, .groupProgress, .groupCompleted, .overallProgress:
            return []
        }
    }

    private mutating func ended(_ id: DownloadID, _ method: String) -> [(String, DownloadID)] {
        let wasRunning = running.remove(id) != nil
        announced.remove(id)
        return (wasRunning ? [] : [("aria2.onDownloadStart", id)]) + [(method, id)]
    }
}
