import Foundation
import Haul

// The seeds' app: a lesson app that caches resources made of shards for offline use.
//
//   shards-app --base URL --downloads DIR --ledger FILE [--resources N] [--shards A,B,C]
//              [--query Q] [--in-process STATE_DIR] [--daemon-state DIR] [--socket PATH]
//
// It adds each resource as a group (in order, 4 shards at once), and acts once when a resource
// is complete: it checks every shard's file and writes "ready NAME COUNT" to its ledger. It can
// be killed at any moment (kill -9 included) and started again: it adds nothing twice, and acts
// on each resource exactly once, because it records what it did in its ledger (fsync) before it
// acknowledges the event that asked for it. That is the contract of at-least-once events.

struct Options {
    var base = URL(string: "http://127.0.0.1:8080")!
    var downloads = URL(fileURLWithPath: "downloads")
    var ledger = URL(fileURLWithPath: "ledger.txt")
    var shards = [100, 200, 300]
    var inProcessState: URL?
    var daemonState: URL?
    var socket: String?
    var query: String?

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { throw UsageError("\(flag) needs a value") }
            switch flag {
            case "--base": base = URL(string: value)!
            case "--downloads": downloads = URL(fileURLWithPath: value, isDirectory: true)
            case "--ledger": ledger = URL(fileURLWithPath: value)
            case "--shards": shards = value.split(separator: ",").compactMap { Int($0) }
            case "--resources": shards = Array(repeating: 100, count: Int(value) ?? 1)
            case "--in-process": inProcessState = URL(fileURLWithPath: value, isDirectory: true)
            case "--daemon-state": daemonState = URL(fileURLWithPath: value, isDirectory: true)
            case "--socket": socket = value
            case "--query": query = value
            default: throw UsageError("unknown option \(flag)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What the app has done, one line per deed, kept on disk before the event that asked for it
/// is acknowledged.
final class Ledger {
    let url: URL
    private(set) var lines: Set<String>

    init(url: URL) {
        self.url = url
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        lines = Set(text.split(separator: "\n").map(String.init))
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        }
    }

    func contains(_ line: String) -> Bool { lines.contains(line) }

    func contains(prefix: String) -> Bool { lines.contains { $0.hasPrefix(prefix) } }

    /// Appends the line and flushes it to disk.
    func record(_ line: String) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((line + "\n").utf8))
        try handle.synchronize()
        lines.insert(line)
    }
}

func resourceName(_ index: Int) -> String { "lesson-\(index + 1)" }

func requests(for index: Int, count: Int, options: Options) -> [DownloadRequest] {
    let directory = options.downloads.appendingPathComponent(resourceName(index), isDirectory: true)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (0..<count).map { shard in
        // Each shard is `BASE/lessonN-shardK.bin`; `--query` adds a query to every URL, in which
        // `{n}` stands for a number unique to the shard (a test server's content seed, say).
        var text = options.base.appendingPathComponent("lesson\(index + 1)-shard\(shard).bin").absoluteString
        if let query = options.query {
            text += "?" + query.replacingOccurrences(of: "{n}", with: "\(index * 10_000 + shard)")
        }
        return DownloadRequest(url: URL(string: text)!, directory: directory, fileName: "shard-\(shard).bin")
    }
}

/// Opens the session: in the daemon by default, in this process with `--in-process`. The rest
/// of the app does not know which.
func openSession(_ options: Options) async throws(HaulError) -> any DownloadSession {
    if let state = options.inProcessState {
        var configuration = DownloadManager.Configuration(maxConcurrentDownloads: 4)
        configuration.groupOrder = .sequential
        configuration.keepsEventOutbox = true
        return try await DownloadManager(identifier: "com.example.shards", stateDirectory: state, configuration: configuration)
    }
    var configuration = BackgroundSession.Configuration(settings: SessionSettings(maxConcurrentDownloads: 4, groupOrder: .sequential))
    configuration.daemonStateDirectory = options.daemonState
    if let socket = options.socket { configuration.endpoint = .unixSocket(path: socket) }
    return try await BackgroundSession(identifier: "com.example.shards", configuration: configuration)
}

func run(_ options: Options) async throws {
    let ledger = Ledger(url: options.ledger)
    let session = try await openSession(options)

    // Add each resource once: after a restart, the ledger says which were added already.
    for (index, count) in options.shards.enumerated() where !ledger.contains("added \(resourceName(index))") {
        _ = try await session.add(requests(for: index, count: count, options: options), toGroup: resourceName(index), ifPresent: .continue)
        try ledger.record("added \(resourceName(index))")
    }

    var ready = options.shards.indices.filter { ledger.contains(prefix: "ready \(resourceName($0)) ") }.count
    guard ready < options.shards.count else {
        print("all \(ready) resources ready")
        await session.close()
        return
    }
    for try await event in session.events() {
        if case .groupCompleted(let summary) = event.kind, !ledger.contains(prefix: "ready \(summary.name) ") {
            // Act once: check every shard, then record the deed before acknowledging.
            guard summary.succeeded else {
                FileHandle.standardError.write(Data("resource \(summary.name): \(summary.failed.count) shards failed\n".utf8))
                exit(1)
            }
            for file in summary.files where !FileManager.default.fileExists(atPath: file.url.path) {
                FileHandle.standardError.write(Data("resource \(summary.name): \(file.url.path) is missing\n".utf8))
                exit(1)
            }
            try ledger.record("ready \(summary.name) \(summary.files.count)")
            ready += 1
            print("ready \(summary.name) (\(summary.files.count) shards)")
        }
        try await session.acknowledge(event)
        if ready == options.shards.count { break }
    }
    print("all \(ready) resources ready")
    await session.close()
}

do {
    try await run(try Options(CommandLine.arguments))
} catch {
    FileHandle.standardError.write(Data("shards-app: \(error)\n".utf8))
    exit(1)
}
