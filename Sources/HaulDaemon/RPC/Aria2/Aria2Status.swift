import Foundation
import Haul

/// A download as aria2 describes it (`tellStatus`, `getFiles`, `getUris`, `getServers`): every
/// value a string, one file per download, whose URIs are the request's URL and mirrors.
///
/// Haul writes each download from its first byte onward, so the pieces aria2 reports
/// (`pieceLength`, `numPieces`, `bitfield`) are those of the contiguous prefix done so far,
/// in aria2's default piece length.
enum Aria2Status {
    static let pieceLength: Int64 = 1 << 20

    /// aria2's status word: active, waiting, paused, error, complete or removed.
    static func name(_ state: DownloadState) -> String {
        switch state {
        case .queued: return "waiting"
        case .running: return "active"
        case .paused: return "paused"
        case .completed: return "complete"
        case .failed: return "error"
        case .canceled: return "removed"
        }
    }

    /// The key of `entry` that names a download's resource (`{group, source}`).
    static let resourceKey = "haulResource"

    /// The `tellStatus` struct; with `keys` (non-empty), only those keys. `servers`: where a
    /// running download fetches from (`DownloadManager.servers(of:)`), for `files[].uris`.
    static func entry(_ info: DownloadInfo, keys: [String]?, servers: [DownloadServer] = []) -> JSONValue {
        let wanted = keys.flatMap { $0.isEmpty ? nil : Set($0) }
        func include(_ key: String) -> Bool { wanted?.contains(key) ?? true }
        var entry: [String: JSONValue] = [:]
        func put(_ key: String, _ value: @autoclosure () -> JSONValue) {
            if include(key) { entry[key] = value() }
        }
        let total = info.progress.expectedBytes ?? 0
        let done = info.progress.completedBytes
        let running = info.state == .running
        put("gid", .string(info.id.description))
        // Between attempts (a server or network that is gone): aria2 shows such a download as
        // waiting, with the reason.
        put("status", .string(info.isWaitingToRetry ? "waiting" : name(info.state)))
        put("totalLength", string(total))
        put("completedLength", string(done))
        put("uploadLength", "0")
        put("downloadSpeed", string(running ? Int64(info.progress.bytesPerSecond) : 0))
        put("uploadSpeed", "0")
        // The requests under way, over every URI (a split download has several).
        put("connections", string(running ? Int64(max(1, servers.reduce(0) { $0 + $1.connections })) : 0))
        put("pieceLength", string(pieceLength))
        put("numPieces", string(pieces(total)))
        if let bitfield = bitfield(total: total, done: done, started: info.attempts > 0 || info.state == .completed) {
            put("bitfield", .string(bitfield))
        }
        put("dir", .string(info.request.directory.path))
        // Haul's own key, given only when asked for by name (aria2 clients never see it): the
        // resource (playlist, Metalink document) the download is a file of, so the dashboard
        // shows the resource as one row.
        if wanted?.contains(resourceKey) == true, let group = info.group, let source = info.request.metadata[ResourcePlan.metadataKey] {
            entry[resourceKey] = .object(["group": .string(group), "source": .string(source)])
        }
        put("files", .array([file(info, servers: servers)]))
        if info.state.isTerminal {
            let code: Int
            switch info.state {
            case .completed: code = Aria2ErrorCode.finished
            case .canceled: code = Aria2ErrorCode.removed
            default: code = info.error.map(Aria2ErrorCode.code(for:)) ?? Aria2ErrorCode.unknown
            }
            put("errorCode", string(Int64(code)))
            put("errorMessage", .string(info.state == .failed ? info.error?.message ?? "" : ""))
        } else if info.isWaitingToRetry, let error = info.error {
            put("errorCode", string(Int64(Aria2ErrorCode.code(for: error))))
            put("errorMessage", .string(error.message))
        }
        return .object(entry)
    }

    /// The one file of a download (`getFiles`). Its path is where it was placed; else the one
    /// `out` names; else, once the server answered and until the download ends, the one its URL
    /// gives (as aria2 shows it while the transfer runs; a Content-Disposition name or a
    /// numbered name for a taken one shows once the file is placed); else empty, as in aria2
    /// before the name is known.
    /// Its `uris` are `getUris`' list, from the same `servers`.
    static func file(_ info: DownloadInfo, servers: [DownloadServer] = []) -> JSONValue {
        .object([
            "index": "1",
            "path": .string(path(info)),
            "length": string(info.progress.expectedBytes ?? 0),
            "completedLength": string(info.progress.completedBytes),
            "selected": "true",
            "uris": uris(info, servers: servers),
        ])
    }

    static func path(_ info: DownloadInfo) -> String {
        if let placed = info.fileURL { return placed.path }
        if let name = info.request.fileName { return info.request.directory.appendingPathComponent(name).path }
        // The server answered: a final URL recorded, a length known, or bytes received.
        let answered = info.finalURL != nil || info.progress.expectedBytes != nil || info.progress.completedBytes > 0
        guard !info.state.isTerminal, answered else { return "" }
        return info.request.directory.appendingPathComponent(info.expectedFileName).path
    }

    /// `getUris`: every URI of the download (its URL, then its mirrors). `used`: asked in the
    /// current attempt (`servers`), or the first URI once a transfer was attempted; the others
    /// `waiting`.
    static func uris(_ info: DownloadInfo, servers: [DownloadServer] = []) -> JSONValue {
        let attempted = info.attempts > 0 || info.state == .running || info.state == .completed
        let inUse = Set(servers.map(\.uri.absoluteString))
        return .array(info.request.urls.enumerated().map { index, url in
            let text = url.absoluteString
            let used = inUse.contains(text) || (attempted && index == 0)
            return .object(["uri": .string(text), "status": used ? "used" : "waiting"])
        })
    }

    /// `getServers`, for a running download: the URIs its connections fetch from right now,
    /// after redirects, with each one's speed (the download's when it has one connection);
    /// between attempts, its first URI.
    static func servers(_ info: DownloadInfo, servers asked: [DownloadServer] = []) -> JSONValue {
        let speed = Int64(info.progress.bytesPerSecond)
        let inUse = asked.filter { $0.connections > 0 }
        let listed: [JSONValue] = inUse.isEmpty
            ? [.object([
                "uri": .string(info.request.url.absoluteString),
                "currentUri": .string((info.finalURL ?? info.request.url).absoluteString),
                "downloadSpeed": string(speed),
            ])]
            : inUse.map { server in
                .object([
                    "uri": .string(server.uri.absoluteString),
                    "currentUri": .string(server.currentURL.absoluteString),
                    "downloadSpeed": string(server.bytesPerSecond ?? speed),
                ])
            }
        return .array([.object(["index": "1", "servers": .array(listed)])])
    }

    static func pieces(_ total: Int64) -> Int64 {
        total <= 0 ? 0 : (total + pieceLength - 1) / pieceLength
    }

    /// Hex of one bit per piece, highest bit first, set for each piece fully done; nil before
    /// the length is known or anything was attempted (aria2 leaves the key out then).
    static func bitfield(total: Int64, done: Int64, started: Bool) -> String? {
        let count = pieces(total)
        guard count > 0, started else { return nil }
        let complete = done >= total ? count : min(count, done / pieceLength)
        var bytes = [UInt8](repeating: 0, count: Int((count + 7) / 8))
        for piece in 0..<Int(complete) {
            bytes[piece / 8] |= 0x80 >> UInt8(piece % 8)
        }
        return bytes.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }

    private static func string(_ value: Int64) -> JSONValue {
        .string(String(value))
    }
}
