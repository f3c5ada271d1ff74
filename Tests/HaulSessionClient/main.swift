import Crypto
import Foundation
import Haul
import HaulTestServer

/// The client process of the background-session tests, spawned for real so that it can be
/// killed -9 like an app. Commands:
///
/// - `enqueue SOCKET SESSION BASE_URL DIR GROUPS FILES`: attaches (4 at once, groups in order),
///   adds GROUPS groups of FILES small files from BASE_URL, prints `enqueued N`, then waits to
///   be killed.
/// - `collect SOCKET SESSION`: attaches, reads the session's kept events until
///   `didFinishEvents`, acknowledges them, and prints one JSON line: the kinds counted, the
///   completed groups, and the completed downloads with their paths and verified sha256.
/// - `attach SOCKET SESSION`: attaches and prints the session's downloads as JSON lines.
@main
struct SessionClient {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            switch arguments.first {
            case "enqueue" where arguments.count == 7:
                try await enqueue(socket: arguments[1], session: arguments[2], base: arguments[3], directory: arguments[4],
                                  groups: Int(arguments[5]) ?? 1, files: Int(arguments[6]) ?? 1)
            case "collect" where arguments.count == 3:
                try await collect(socket: arguments[1], session: arguments[2])
            default:
                FileHandle.standardError.write(Data("usage: haul-session-client enqueue|collect ...\n".utf8))
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("haul-session-client: \(error)\n".utf8))
            exit(1)
        }
    }

    static func session(_ socket: String, _ identifier: String) async throws -> BackgroundSession {
        try await BackgroundSession(identifier: identifier, configuration: BackgroundSession.Configuration(
            endpoint: .unixSocket(path: socket),
            settings: SessionSettings(maxConcurrentDownloads: 4, groupOrder: .sequential),
            startsDaemon: false,
            eventPollWait: .seconds(5)))
    }

    static func enqueue(socket: String, session identifier: String, base: String, directory: String, groups: Int, files: Int) async throws {
        let session = try await session(socket, identifier)
        var total = 0
        for group in 0..<groups {
            let requests = (0..<files).map { file in
                let (seed, size) = content(group: group, file: file, files: files)
                let digest = SHA256.hash(data: TestContent.bytes(seed: seed, size: size))
                return DownloadRequest(
                    url: URL(string: "\(base)/file/g\(group)-f\(file).bin?size=\(size)&seed=\(seed)")!,
                    directory: URL(fileURLWithPath: directory),
                    checksums: [try! Checksum(.sha256, hex: digest.map { String(format: "%02x", $0) }.joined())])
            }
            _ = try await session.add(requests, toGroup: "group-\(group)", ifPresent: .addAnew)
            total += requests.count
        }
        say("enqueued \(total)")
        // An app that goes on with other work; the test kills it -9.
        try await Task.sleep(for: .seconds(3600))
    }

    /// One line on standard output, written at once (the test waits for it).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The seed and size of a file: the test computes the same to verify what was placed.
    static func content(group: Int, file: Int, files: Int) -> (seed: UInt64, size: Int) {
        let n = group * files + file
        return (UInt64(n + 1), 512 + n % 1500)
    }

    struct Collected: Encodable {
        var kinds: [String: Int] = [:]
        var groupsCompleted: [String] = []
        var completed: [String: String] = [:]
        var checksums: [String: String] = [:]
        var eventsBeforeFinish = 0
        var ordered = true
    }

    static func collect(socket: String, session identifier: String) async throws {
        let session = try await session(socket, identifier)
        var collected = Collected()
        var last: Int64 = 0
        for try await event in session.events() {
            if case .didFinishEvents = event.kind {
                if last > 0 { try await session.acknowledge(through: last) }
                let line = try JSONEncoder().encode(collected)
                say(String(decoding: line, as: UTF8.self))
                await session.close()
                return
            }
            guard let sequence = event.sequence else { continue }
            collected.eventsBeforeFinish += 1
            if sequence <= last { collected.ordered = false }
            last = sequence
            collected.kinds[kindName(event.kind), default: 0] += 1
            if case .groupCompleted(let summary) = event.kind { collected.groupsCompleted.append(summary.name) }
            if case .finished(let result) = event.kind, let file = result.file {
                collected.completed[result.id.description] = file.url.path
                collected.checksums[result.id.description] = file.checksums.first { $0.algorithm == .sha256 }?.hex
            }
        }
    }

    /// The name the outbox gives the event's kind.
    static func kindName(_ kind: DownloadEvent.Kind) -> String {
        switch kind {
        case .queued: "queued"
        case .started: "started"
        case .progress: "progress"
        case .retrying: "retrying"
        case .paused: "paused"
        case .resumed: "resumed"
        case .finished(let result):
            switch result.outcome {
            case .completed: "completed"
            case .failed: "failed"
            case .canceled: "canceled"
            }
        case .groupCompleted: "groupCompleted"
        case .didFinishEvents: "didFinishEvents"
        }
    }
}
