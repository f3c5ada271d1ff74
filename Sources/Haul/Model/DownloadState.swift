/// Where a download is in its life, as callers see it.
public enum DownloadState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for a free slot in the scheduler: not started yet, or waiting for a server that
    /// is gone after the quick retries (`DownloadInfo.isWaitingToRetry`), which gives the slot
    /// back until the retry is due and then takes the next free one before the others.
    case queued
    /// Holding a slot: transferring, or between quick retries after a transient failure.
    case running
    /// Stopped by request; bytes and resume state are kept.
    case paused
    /// The file was verified and atomically placed (or skipped because it already existed).
    case completed
    /// Gave up; `DownloadInfo.error` says why.
    case failed
    /// Stopped for good by request; its part file was deleted.
    case canceled

    /// Completed, failed and canceled downloads never change state again.
    public var isTerminal: Bool {
        switch self {
        case .completed, .failed, .canceled: return true
        case .queued, .running, .paused: return false
        }
    }
}
