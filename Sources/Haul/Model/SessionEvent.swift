import Foundation

/// An event as a session's outbox keeps it until the client acknowledges it: what an app needs
/// to act on after it was away (started, paused with a reason, completed with the file and its
/// verified checksums, failed with the error, a group completed with its summary).
///
/// Progress is never kept here: only the latest value matters, and the daemon reports it live.
public struct SessionEvent: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case started, paused, resumed, completed, failed, canceled, groupCompleted
    }

    /// The outbox's order: increasing, never reused, the cursor a client acknowledges.
    public var sequence: Int64
    public var kind: Kind
    public var download: DownloadID?
    public var group: String?
    /// `started`: the offset the transfer continued from.
    public var resumedFrom: Int64?
    /// `completed`: where the file is, its length and the checksums that were verified.
    public var fileURL: URL?
    public var length: Int64?
    public var verifiedChecksums: [Checksum]?
    /// `paused` (a reason, when Haul paused it) and `failed`.
    public var errorCode: String?
    public var errorMessage: String?
    /// `groupCompleted`: the members by outcome.
    public var completed: [DownloadID]?
    public var failed: [DownloadID]?
    public var canceled: [DownloadID]?
    public var date: Date

    public init(sequence: Int64 = 0, kind: Kind, download: DownloadID? = nil, group: String? = nil, date: Date = Date()) {
        self.sequence = sequence
        self.kind = kind
        self.download = download
        self.group = group
        self.date = date
    }

    /// The outbox form of a manager event; nil for events that are not kept (queued,
    /// progress, checkpoints, retries).
    init?(_ event: DownloadEvent) {
        switch event {
        case .started(let id, let resumedFrom, _):
            self.init(kind: .started, download: id)
            self.resumedFrom = resumedFrom
        case .paused(let id, let reason):
            self.init(kind: .paused, download: id)
            errorCode = reason?.code.description
            errorMessage = reason?.message
        case .resumed(let id):
            self.init(kind: .resumed, download: id)
        case .completed(let info):
            self.init(kind: .completed, download: info.id, group: info.group)
            fileURL = info.fileURL
            length = info.progress.expectedBytes ?? info.progress.completedBytes
            verifiedChecksums = info.verifiedChecksums
        case .failed(let info):
            self.init(kind: .failed, download: info.id, group: info.group)
            errorCode = info.error?.code.description
            errorMessage = info.error?.message
        case .canceled(let id):
            self.init(kind: .canceled, download: id)
        case .groupCompleted(let summary):
            self.init(kind: .groupCompleted, group: summary.name)
            completed = summary.completed.map(\.id)
            failed = summary.failed.map(\.id)
            canceled = summary.canceled.map(\.id)
        case .queued, .checkpointed, .progress, .retrying, .groupProgress, .overallProgress:
            return nil
        }
    }
}
