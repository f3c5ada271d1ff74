import Foundation

/// How one download ended: its file, or why not.
///
/// What a group yields for each member as it finishes (`DownloadGroup.results`), what its
/// summary lists (`GroupSummary.results`), and what `DownloadEvent.Kind.finished` carries.
public struct DownloadResult: Sendable, Hashable, Identifiable {
    /// The three ways a download ends.
    public enum Outcome: Sendable, Hashable {
        /// Verified and placed.
        case completed(DownloadedFile)
        /// Gave up, for the reason given: a permanent failure, retries used up, or a deadline
        /// passed (`HaulError.code` tells which).
        case failed(HaulError)
        /// Canceled on request; its part file was deleted.
        case canceled
    }

    /// The download.
    public let id: DownloadID
    /// The group it belongs to, if any.
    public let group: String?
    /// How it ended.
    public let outcome: Outcome

    /// A result (sessions make these; tests and previews may too).
    public init(id: DownloadID, group: String? = nil, outcome: Outcome) {
        self.id = id
        self.group = group
        self.outcome = outcome
    }

    /// The placed file, when it completed.
    public var file: DownloadedFile? {
        if case .completed(let file) = outcome { return file }
        return nil
    }

    /// Why it failed, when it did.
    public var error: HaulError? {
        if case .failed(let error) = outcome { return error }
        return nil
    }
}

extension DownloadInfo {
    /// How the download ended; nil while it has not (queued, running or paused).
    public var result: DownloadResult? {
        let outcome: DownloadResult.Outcome
        switch state {
        case .completed:
            guard let fileURL else { return nil }
            let length = progress.expectedBytes ?? progress.completedBytes
            outcome = .completed(DownloadedFile(url: fileURL, length: length, checksums: verifiedChecksums, skipped: skipped))
        case .failed:
            outcome = .failed(error ?? HaulError(.invalidState, "download \(id) failed for a reason that was not kept"))
        case .canceled:
            outcome = .canceled
        case .queued, .running, .paused:
            return nil
        }
        return DownloadResult(id: id, group: group, outcome: outcome)
    }
}
