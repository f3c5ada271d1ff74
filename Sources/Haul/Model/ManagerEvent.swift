import Foundation

/// Something that happened to a download or a group, as the manager reports it to the `haul`
/// tool and the daemon (with whole `DownloadInfo`s, and checkpoints and overall progress that
/// an app has no use for). Apps read `DownloadEvent`, made from these only when someone
/// listens (`DownloadManager.events()`).
///
/// State events are delivered to every subscriber in order; progress events are throttled to
/// the manager's `progressInterval` and carry only the latest value.
package enum ManagerEvent: Sendable, Hashable {
    /// A download was added and waits for a slot.
    case queued(DownloadID)
    /// The download took a slot and its transfer is starting: what aria2 calls active, and
    /// what `status` says from now on. `started` follows once the server answers (or
    /// `failed`, `paused`, `canceled` if it ends first). Not kept in an outbox.
    case activated(DownloadID)
    /// A transfer got its response and began writing; `resumedFrom` is the byte offset it
    /// continued from (0 for a fresh start).
    case started(DownloadID, resumedFrom: Int64, finalURL: URL)
    /// The part file was flushed up to `durableOffset` and that offset is recorded in the
    /// store: a crash from now on loses nothing before it.
    case checkpointed(DownloadID, durableOffset: Int64)
    /// Throttled progress of one download.
    case progress(DownloadID, TransferProgress)
    /// A transient failure; the download retries after `delay`, resuming when the rules allow.
    case retrying(DownloadID, attempt: Int, delay: Duration, error: HaulError)
    /// The download stopped with its bytes kept: on request or shutdown (`reason` nil), or
    /// because it cannot go on until someone acts (`reason`, e.g. `.diskFull`).
    case paused(DownloadID, reason: HaulError?)
    /// A paused download was queued again.
    case resumed(DownloadID)
    /// Verified and placed at `fileURL` (or skipped because it existed).
    case completed(DownloadInfo)
    /// Gave up; `info.error` says why.
    case failed(DownloadInfo)
    /// Stopped for good on request; its part file was removed.
    case canceled(DownloadID, group: String?)
    /// Throttled progress of a group.
    case groupProgress(String, TransferProgress)
    /// Every member of the group has finished.
    case groupCompleted(GroupSummary)
    /// Throttled progress of everything the manager holds that is not finished.
    case overallProgress(TransferProgress)
}
