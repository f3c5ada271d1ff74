import Foundation
import Haul

/// The objects `haul get --json` prints, one per line. Each has an `event` field naming it;
/// IDs are the 16-hex-digit `DownloadID`s; byte counts are integers; durations are seconds.
///
/// A field name means the same type in every event (`skipped` is always a count, for
/// example), so that typed decoders can use one struct for all lines.
///
/// These are the wire format for scripts and front-ends, so they are plain Codable structs
/// whose field names are the contract, not whatever `ManagerEvent` happens to look like.
enum JSONEventLines {
    struct Queued: Encodable {
        let event = "queued"
        let id: String
        let url: String
    }

    struct Started: Encodable {
        let event = "started"
        let id: String
        let url: String
        /// The byte offset the transfer continued from; 0 for a fresh start.
        let resumedFrom: Int64
        /// Where the bytes come from after redirects.
        let finalURL: String
    }

    struct Checkpointed: Encodable {
        let event = "checkpointed"
        let id: String
        /// Bytes flushed to disk and recorded: a kill -9 from now on loses nothing before this.
        let durableOffset: Int64
    }

    struct Progress: Encodable {
        let event = "progress"
        let id: String
        let completedBytes: Int64
        let expectedBytes: Int64?
        let bytesPerSecond: Double
    }

    struct Retrying: Encodable {
        let event = "retrying"
        let id: String
        let url: String
        /// The attempt about to be made (2 for the first retry).
        let attempt: Int
        let delaySeconds: Double
        /// True once the quick retries are used up: the download waits for the server (with
        /// `--max-tries 0` or `--retry-until`) and tries again now and then.
        let waiting: Bool
        let error: ErrorBody
    }

    /// `paused`, `resumed` and `canceled`: which download, and for a pause that needs someone
    /// to act (a full disk), why.
    struct StateChange: Encodable {
        let event: String
        let id: String
        let url: String
        var reason: ErrorBody? = nil
    }

    struct Completed: Encodable {
        let event = "completed"
        let id: String
        let url: String
        let finalURL: String?
        /// Absolute path of the placed (or, when skipped, the existing) file.
        let path: String?
        let bytes: Int64
        /// True when `--conflict skip` found the file already there and left it alone.
        let alreadyExisted: Bool
        /// Algorithm name → lowercase hex, as computed while streaming.
        let checksums: [String: String]
    }

    struct Failed: Encodable {
        let event = "failed"
        let id: String
        let url: String
        let finalURL: String?
        let attempts: Int
        let error: ErrorBody
    }

    struct GroupProgress: Encodable {
        let event = "groupProgress"
        let completedBytes: Int64
        let expectedBytes: Int64?
        let bytesPerSecond: Double
        let finished: Int
        let total: Int
    }

    struct GroupCompleted: Encodable {
        let event = "groupCompleted"
        let completed: Int
        let failed: Int
        let canceled: Int
    }

    /// The last line of every run.
    struct Summary: Encodable {
        let event = "summary"
        let total: Int
        let completed: Int
        let skipped: Int
        let failed: Int
        /// Bytes of the completed files.
        let bytes: Int64
        /// Bytes received from servers in this run, by every download (failed ones too).
        let receivedBytes: Int64
        let seconds: Double
        let exitCode: Int32
        let interrupted: Bool
        /// `SIGINT` or `SIGTERM` when interrupted.
        let signal: String?
    }

    struct ErrorBody: Encodable {
        /// `HaulError.Code`, e.g. `httpStatus`, `checksumMismatch`.
        let code: String
        let message: String
        let httpStatus: Int?
        /// The exit status this kind of failure leads to.
        let exitCode: Int32

        init(_ error: HaulError) {
            self.code = error.code.description
            self.message = error.message
            self.httpStatus = error.httpStatus
            self.exitCode = ExitStatus(for: error).rawValue
        }
    }
}
