import Foundation

/// A download as the daemon's `haul.*` methods describe it, and as `BackgroundSession` reads
/// it back into a `DownloadInfo`. Plain JSON fields, so clients in other languages can use it.
public struct RemoteDownload: Sendable, Hashable, Codable {
    public var id: DownloadID
    public var state: DownloadState
    public var request: DownloadRequest
    public var group: String?
    public var completedBytes: Int64
    public var expectedBytes: Int64?
    public var bytesPerSecond: Double
    public var finalURL: URL?
    public var fileURL: URL?
    public var skipped: Bool
    public var verifiedChecksums: [Checksum]
    public var errorCode: String?
    public var errorMessage: String?
    public var httpStatus: Int?
    public var attempts: Int
    /// `DownloadInfo.isWaitingToRetry`; absent (nil) from daemons that predate it.
    public var waitingToRetry: Bool?

    public init(_ info: DownloadInfo) {
        id = info.id
        state = info.state
        request = info.request
        group = info.group
        completedBytes = info.progress.completedBytes
        expectedBytes = info.progress.expectedBytes
        bytesPerSecond = info.progress.bytesPerSecond
        finalURL = info.finalURL
        fileURL = info.fileURL
        skipped = info.skipped
        verifiedChecksums = info.verifiedChecksums
        errorCode = info.error?.code.description
        errorMessage = info.error?.message
        httpStatus = info.error?.httpStatus
        attempts = info.attempts
        waitingToRetry = info.isWaitingToRetry
    }

    /// The same download as `DownloadManager` would describe it.
    public var info: DownloadInfo {
        var info = DownloadInfo(id: id, request: request, group: group)
        info.state = state
        info.progress = TransferProgress(completedBytes: completedBytes, expectedBytes: expectedBytes, bytesPerSecond: bytesPerSecond)
        info.finalURL = finalURL
        info.fileURL = fileURL
        info.skipped = skipped
        info.verifiedChecksums = verifiedChecksums
        if let errorCode {
            info.error = HaulError(HaulError.Code(named: errorCode) ?? .connectionFailed, errorMessage ?? errorCode, httpStatus: httpStatus)
        }
        info.attempts = attempts
        info.isWaitingToRetry = waitingToRetry ?? false
        return info
    }
}

/// The answer to `haul.events`: kept events after the cursor, then the latest progress of the
/// session's running downloads (progress is never kept, only reported).
public struct RemoteEventBatch: Sendable, Hashable, Codable {
    public var events: [SessionEvent]
    public var progress: [RemoteProgress]

    public init(events: [SessionEvent], progress: [RemoteProgress]) {
        self.events = events
        self.progress = progress
    }
}

public struct RemoteProgress: Sendable, Hashable, Codable {
    public var id: DownloadID
    public var completedBytes: Int64
    public var expectedBytes: Int64?
    public var bytesPerSecond: Double

    public init(id: DownloadID, progress: TransferProgress) {
        self.id = id
        completedBytes = progress.completedBytes
        expectedBytes = progress.expectedBytes
        bytesPerSecond = progress.bytesPerSecond
    }

    public var progress: TransferProgress {
        TransferProgress(completedBytes: completedBytes, expectedBytes: expectedBytes, bytesPerSecond: bytesPerSecond)
    }
}

/// The answer to `haul.group`: a group's members by outcome and its progress.
public struct RemoteGroupSummary: Sendable, Hashable, Codable {
    public var name: String
    public var completed: [RemoteDownload]
    public var failed: [RemoteDownload]
    public var canceled: [RemoteDownload]
    public var unfinished: [RemoteDownload]

    public init(_ summary: GroupSummary) {
        name = summary.name
        completed = summary.completed.map(RemoteDownload.init)
        failed = summary.failed.map(RemoteDownload.init)
        canceled = summary.canceled.map(RemoteDownload.init)
        unfinished = summary.unfinished.map(RemoteDownload.init)
    }

    public var summary: GroupSummary {
        GroupSummary(
            name: name, completed: completed.map(\.info), failed: failed.map(\.info),
            canceled: canceled.map(\.info), unfinished: unfinished.map(\.info))
    }
}
