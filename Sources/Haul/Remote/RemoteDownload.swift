import Foundation

/// A download as the daemon's `haul.*` methods describe it, and as `BackgroundSession` reads
/// it back into a `DownloadInfo`. Plain JSON fields, so clients in other languages can use it.
package struct RemoteDownload: Sendable, Hashable, Codable {
    package var id: DownloadID
    package var state: DownloadState
    package var request: DownloadRequest
    package var group: String?
    package var completedBytes: Int64
    package var expectedBytes: Int64?
    package var bytesPerSecond: Double
    package var finalURL: URL?
    package var fileURL: URL?
    package var skipped: Bool
    package var verifiedChecksums: [Checksum]
    package var errorCode: String?
    package var errorMessage: String?
    package var httpStatus: Int?
    package var attempts: Int
    /// `DownloadInfo.isWaitingToRetry`; absent (nil) from daemons that predate it.
    package var waitingToRetry: Bool?

    package init(_ info: DownloadInfo) {
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
    package var info: DownloadInfo {
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
package struct RemoteEventBatch: Sendable, Hashable, Codable {
    package var events: [StoredEvent]
    package var progress: [RemoteProgress]

    package init(events: [StoredEvent], progress: [RemoteProgress]) {
        self.events = events
        self.progress = progress
    }
}

package struct RemoteProgress: Sendable, Hashable, Codable {
    package var id: DownloadID
    package var completedBytes: Int64
    package var expectedBytes: Int64?
    package var bytesPerSecond: Double

    package init(id: DownloadID, progress: TransferProgress) {
        self.id = id
        completedBytes = progress.completedBytes
        expectedBytes = progress.expectedBytes
        bytesPerSecond = progress.bytesPerSecond
    }

    package var progress: TransferProgress {
        TransferProgress(completedBytes: completedBytes, expectedBytes: expectedBytes, bytesPerSecond: bytesPerSecond)
    }
}

/// The answer to `haul.group` and `haul.waitGroup`: a group's members by outcome, each as a
/// whole download (its file, or its error), and every member's ID in the order added.
package struct RemoteGroupSummary: Sendable, Hashable, Codable {
    package var name: String
    package var completed: [RemoteDownload]
    package var failed: [RemoteDownload]
    package var canceled: [RemoteDownload]
    package var unfinished: [RemoteDownload]
    /// Every member, in the order added (absent from daemons before it).
    package var order: [DownloadID]?

    /// A group of `members`, in the order they were added.
    package init(name: String, members: [DownloadInfo]) {
        self.name = name
        completed = members.filter { $0.state == .completed }.map(RemoteDownload.init)
        failed = members.filter { $0.state == .failed }.map(RemoteDownload.init)
        canceled = members.filter { $0.state == .canceled }.map(RemoteDownload.init)
        unfinished = members.filter { !$0.state.isTerminal }.map(RemoteDownload.init)
        order = members.map(\.id)
    }

    /// The summary as apps see it: every finished member with its file or error, in the order
    /// members were added.
    package var summary: GroupSummary {
        var results = (completed + failed + canceled).compactMap(\.info.result)
        if let order {
            let place = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            results.sort { (place[$0.id] ?? .max) < (place[$1.id] ?? .max) }
        }
        return GroupSummary(name: name, results: results, unfinished: unfinished.map(\.id))
    }
}
