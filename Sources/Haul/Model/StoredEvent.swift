import Foundation

/// An event as a session's outbox keeps it until the client acknowledges it, and as the
/// daemon's `haul.events` sends it: plain JSON fields, which clients in other languages read
/// too. Apps get it as a `DownloadEvent` (`downloadEvent(summary:)`).
///
/// Progress is never kept here: only the latest value matters, and the daemon reports it live.
/// The JSON form only grows: fields added later are optional, so rows an older Haul wrote
/// still decode.
package struct StoredEvent: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case started, paused, resumed, completed, failed, canceled, groupCompleted
    }

    /// The outbox's order: increasing, never reused, the cursor a client acknowledges.
    package var sequence: Int64
    package var kind: Kind
    package var download: DownloadID?
    package var group: String?
    /// `started`: the offset the transfer continued from.
    package var resumedFrom: Int64?
    /// `completed`: where the file is, its length and the checksums that were verified.
    package var fileURL: URL?
    package var length: Int64?
    package var verifiedChecksums: [Checksum]?
    /// `paused` (a reason, when Haul paused it) and `failed`.
    package var errorCode: String?
    package var errorMessage: String?
    /// `failed`: the HTTP status of an `.httpStatus` error.
    package var httpStatus: Int?
    /// `completed`: the name was taken and the conflict policy was `.skip`.
    package var skipped: Bool?
    /// `groupCompleted`: the members by outcome.
    package var completed: [DownloadID]?
    package var failed: [DownloadID]?
    package var canceled: [DownloadID]?
    package var date: Date

    package init(sequence: Int64 = 0, kind: Kind, download: DownloadID? = nil, group: String? = nil, date: Date = Date()) {
        self.sequence = sequence
        self.kind = kind
        self.download = download
        self.group = group
        self.date = date
    }

    /// The outbox form of a manager event; nil for events that are not kept (queued,
    /// activated, progress, checkpoints, retries).
    init?(_ event: ManagerEvent) {
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
            skipped = info.skipped ? true : nil
        case .failed(let info):
            self.init(kind: .failed, download: info.id, group: info.group)
            errorCode = info.error?.code.description
            errorMessage = info.error?.message
            httpStatus = info.error?.httpStatus
        case .canceled(let id, let group):
            self.init(kind: .canceled, download: id, group: group)
        case .groupCompleted(let summary):
            self.init(kind: .groupCompleted, group: summary.name)
            completed = summary.completed.map(\.id)
            failed = summary.failed.map(\.id)
            canceled = summary.canceled.map(\.id)
        case .queued, .activated, .checkpointed, .progress, .retrying, .groupProgress, .overallProgress:
            return nil
        }
    }

    /// The error this event reports (`paused` with a reason, `failed`).
    var error: HaulError? {
        guard let errorCode else { return nil }
        return HaulError(HaulError.Code(named: errorCode) ?? .invalidState, errorMessage ?? errorCode, httpStatus: httpStatus)
    }

    /// The event as apps see it. `summary` gives a completed group's summary (the session
    /// keeps the members of a group whose completion is not acknowledged); nil when the event
    /// cannot be told (an event without the download it is about).
    package func downloadEvent(summary: (String) -> GroupSummary?) -> DownloadEvent? {
        let kind: DownloadEvent.Kind
        switch self.kind {
        case .started:
            guard let download else { return nil }
            kind = .started(download, resumedFrom: resumedFrom ?? 0)
        case .paused:
            guard let download else { return nil }
            kind = .paused(download, reason: error)
        case .resumed:
            guard let download else { return nil }
            kind = .resumed(download)
        case .completed:
            guard let download, let fileURL else { return nil }
            let file = DownloadedFile(url: fileURL, length: length ?? 0, checksums: verifiedChecksums ?? [], skipped: skipped ?? false)
            kind = .finished(DownloadResult(id: download, group: group, outcome: .completed(file)))
        case .failed:
            guard let download else { return nil }
            let error = self.error ?? HaulError(.invalidState, "download \(download) failed")
            kind = .finished(DownloadResult(id: download, group: group, outcome: .failed(error)))
        case .canceled:
            guard let download else { return nil }
            kind = .finished(DownloadResult(id: download, group: group, outcome: .canceled))
        case .groupCompleted:
            guard let group else { return nil }
            // A session keeps a group until its completion is acknowledged; only members the
            // app removed itself are missing, and then so are they from the summary.
            let summary = summary(group) ?? GroupSummary(name: group, results: [])
            kind = .groupCompleted(summary)
        }
        return DownloadEvent(kind, sequence: sequence)
    }
}
