import Foundation

/// A snapshot of one download, as returned by `DownloadManager.info(_:)` and in events.
public struct DownloadInfo: Sendable, Hashable, Identifiable {
    public let id: DownloadID
    /// The request, as the session keeps it (its directory made absolute).
    public var request: DownloadRequest
    /// Where the download is in its life.
    public var state: DownloadState
    /// The group the download belongs to, if any.
    public var group: String?
    /// Bytes written so far, bytes expected, speed.
    public var progress: TransferProgress
    /// The URL the bytes actually came from, after redirects (nil until a response arrived).
    public var finalURL: URL?
    /// Where the file was placed, once completed.
    public var fileURL: URL?
    /// True when the conflict policy was `.skip` and the name was already taken.
    public var skipped: Bool
    /// The digests computed while streaming (one per requested algorithm), once completed.
    public var verifiedChecksums: [Checksum]
    /// Why the download failed (state `.failed`), or the last transient error while retrying.
    public var error: HaulError?
    /// How many HTTP attempts were made.
    public var attempts: Int
    /// True while a started download is between attempts: the last one failed with the
    /// transient `error`, and the next starts after a delay. During the quick retries the
    /// download keeps its slot (`state` is `.running`); once it waits for a server or network
    /// that is gone (see `RetryPolicy`) it gives the slot back (`state` is `.queued`) and takes
    /// the next free one, before downloads that never started, when its retry is due.
    public var isWaitingToRetry: Bool
    /// Offset the latest transfer resumed from (0 when it started from scratch).
    public var resumedFrom: Int64

    init(id: DownloadID, request: DownloadRequest, group: String?) {
        self.id = id
        self.request = request
        self.state = .queued
        self.group = group
        self.progress = TransferProgress()
        self.skipped = false
        self.verifiedChecksums = []
        self.attempts = 0
        self.isWaitingToRetry = false
        self.resumedFrom = 0
    }
}
