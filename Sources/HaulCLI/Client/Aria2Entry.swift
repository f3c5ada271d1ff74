import Foundation
import Haul

/// One download as the daemon's aria2 methods describe it (`tellStatus`, `tellActive`,
/// `tellWaiting`, `tellStopped`): aria2 sends every number as a string, and leaves out the
/// keys a `keys` filter did not ask for, so every field has a default here.
struct Aria2Entry: Decodable, Sendable, Hashable {
    /// aria2's status words.
    enum Status: String, Decodable, Sendable, Hashable {
        case active, waiting, paused, error, complete, removed

        /// Finished for good: listed by `tellStopped`.
        var isStopped: Bool { self == .error || self == .complete || self == .removed }
    }

    struct File: Decodable, Sendable, Hashable {
        var path: String
        var uris: [URI]

        enum CodingKeys: String, CodingKey { case path, uris }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            path = try container.decodeIfPresent(String.self, forKey: .path) ?? ""
            uris = try container.decodeIfPresent([URI].self, forKey: .uris) ?? []
        }
    }

    struct URI: Decodable, Sendable, Hashable {
        var uri: String
    }

    var gid: String
    var status: Status
    var totalLength: Int64
    var completedLength: Int64
    var downloadSpeed: Int64
    var dir: String
    var files: [File]
    /// aria2's error code (its exit status numbers) once the download stopped; "0" when it
    /// completed.
    var errorCode: String?
    var errorMessage: String?

    /// The keys the list and the live view need: enough for a line, nothing more, so that a
    /// listing of thousands of downloads stays small.
    static let listKeys = [
        "gid", "status", "totalLength", "completedLength", "downloadSpeed", "dir", "files", "errorCode", "errorMessage",
    ]

    enum CodingKeys: String, CodingKey {
        case gid, status, totalLength, completedLength, downloadSpeed, dir, files, errorCode, errorMessage
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        gid = try container.decode(String.self, forKey: .gid)
        status = try container.decode(Status.self, forKey: .status)
        totalLength = try Self.number(container, .totalLength)
        completedLength = try Self.number(container, .completedLength)
        downloadSpeed = try Self.number(container, .downloadSpeed)
        dir = try container.decodeIfPresent(String.self, forKey: .dir) ?? ""
        files = try container.decodeIfPresent([File].self, forKey: .files) ?? []
        errorCode = try container.decodeIfPresent(String.self, forKey: .errorCode)
        errorMessage = try container.decodeIfPresent(String.self, forKey: .errorMessage)
    }

    /// A number aria2 sends as a decimal string; 0 when the key was filtered out.
    private static func number(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Int64 {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return 0 }
        guard let value = Int64(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "'\(text)' is not a whole number")
        }
        return value
    }

    /// The file's path once it is known (placed, or named by `out`).
    var path: String? {
        guard let path = files.first?.path, !path.isEmpty else { return nil }
        return path
    }

    /// The URL the download fetches.
    var url: String? { files.first?.uris.first?.uri }

    /// What to call the download in a line: its file name once known, else the URL's last path
    /// component, else the URL.
    var name: String {
        if let path { return URL(fileURLWithPath: path).lastPathComponent }
        guard let url else { return gid }
        if let parsed = URL(string: url), !parsed.lastPathComponent.isEmpty, parsed.lastPathComponent != "/" {
            return parsed.lastPathComponent
        }
        return url
    }

    /// The length when known. aria2 reports an unknown length as "0", so 0 counts as known
    /// only once the download completed (an empty file).
    var expectedBytes: Int64? {
        totalLength > 0 || status == .complete ? totalLength : nil
    }

    /// Progress in the library's terms, for the shared line formatter.
    var progress: TransferProgress {
        TransferProgress(
            completedBytes: completedLength, expectedBytes: expectedBytes,
            bytesPerSecond: status == .active ? Double(downloadSpeed) : 0)
    }

    /// The failure's message, for a download in `error`.
    var failureMessage: String? {
        guard status == .error else { return nil }
        if let errorMessage, !errorMessage.isEmpty { return errorMessage }
        return "failed (aria2 error code \(errorCode ?? "unknown"))"
    }
}
