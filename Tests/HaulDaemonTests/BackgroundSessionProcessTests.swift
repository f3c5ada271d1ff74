import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The seeds' scenario with real processes: a daemon, an app that is killed -9, and an app
/// that comes back under the same session identifier.
@Suite("Background sessions with real processes", .serialized, .timeLimit(.minutes(20)))
struct BackgroundSessionProcessTests {
    struct Collected: Decodable {
        var kinds: [String: Int]
        var groupsCompleted: [String]
        var completed: [String: String]
        var checksums: [String: String?]
        var eventsBeforeFinish: Int
        var ordered: Bool
    }

    static func startDaemon(socket: String, state: URL, out: URL) async throws -> LineProcess {
        let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
        let daemon = try LineProcess(executable: haul, arguments: [
            "daemon", "--socket", socket, "--state-dir", state.path, "--no-tcp", "--dir", out.path,
        ])
        _ = try await firstElement(of: daemon.errors, "the daemon's ready line", within: .seconds(120)) { $0.hasPrefix("haul daemon: ready") }
        return daemon
    }

    static func client(_ arguments: [String]) throws -> LineProcess {
        let binary = try #require(LineProcess.builtProduct("HaulSessionClient"), "build the tests first")
        return try LineProcess(executable: binary, arguments: arguments)
    }

    /// Waits, by following the session's kept events without acknowledging them, until
    /// `count` groups have completed.
    static func waitForGroups(_ count: Int, socket: String, session: String) async throws {
        try await withRPCClient(endpoint: .unixSocket(path: socket)) { client in
            var cursor: Int64 = 0
            var completed = 0
            // Each check is a long poll: it returns as soon as there are events, or after a second.
            try await waitUntil("\(count) groups to complete", within: .seconds(600)) {
                let batch: RemoteEventBatch = try await client.call("haul.events", session, cursor, 5000, 1000)
                for event in batch.events {
                    cursor = max(cursor, event.sequence)
                    if event.kind == .groupCompleted { completed += 1 }
                }
                return completed >= count
            }
            #expect(completed == count)
        }
    }

    /// 30 groups of 200 small files (4 at once, groups in order) are enqueued by an app that
    /// is then killed -9; the daemon finishes all 6,000; a new app process with the same
    /// identifier gets the 30 group completions and the file events in order, then
    /// didFinishEvents, and every file verifies. Acknowledged events are not given again.
    @Test func appKilledDaemonFinishesReattachGetsEverything() async throws {
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            let (state, out, socket) = (workspace.state, workspace.out, workspace.socket)
            let daemon = try await Self.startDaemon(socket: socket, state: state, out: out)

            let groups = 30, files = 200
            let app = try Self.client(["enqueue", socket, "app", String(server.url("/").dropLast()), out.path, "\(groups)", "\(files)"])
            let enqueued = try await firstElement(of: app.output, "the app's first line", within: .seconds(300))
            #expect(enqueued == "enqueued \(groups * files)")
            app.send(SIGKILL)
            #expect(ChildProcess.terminatingSignal(await app.waitForExit()) == SIGKILL)

            try await Self.waitForGroups(groups, socket: socket, session: "app")

            let returning = try Self.client(["collect", socket, "app"])
            let line = try await firstElement(of: returning.output, "the returning app's events", within: .seconds(300))
            let collected = try JSONDecoder().decode(Collected.self, from: Data(line.utf8))
            #expect(collected.ordered)
            #expect(collected.groupsCompleted == (0..<groups).map { "group-\($0)" }, "sequential groups complete in order")
            #expect(collected.kinds["completed"] == groups * files)
            #expect(collected.kinds["started"] ?? 0 >= groups * files)
            #expect(collected.kinds["failed"] == nil)
            #expect(collected.completed.count == groups * files)
            var verified = 0
            for path in collected.completed.values {
                let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
                let parts = name.dropFirst().split(separator: "-f").compactMap { Int($0) }
                let n = parts[0] * files + parts[1]
                let expected = TestContent.bytes(seed: UInt64(n + 1), size: 512 + n % 1500)
                if FileManager.default.contents(atPath: path).map(Array.init) == expected { verified += 1 }
            }
            #expect(verified == groups * files)
            #expect(collected.checksums.values.allSatisfy { $0 != nil }, "every file's sha256 was verified by the daemon")

            // Acknowledged: a second return finds nothing left to replay.
            let again = try Self.client(["collect", socket, "app"])
            let second = try await firstElement(of: again.output, "the second return's events", within: .seconds(120))
            #expect(try JSONDecoder().decode(Collected.self, from: Data(second.utf8)).eventsBeforeFinish == 0)

            daemon.send(SIGTERM)
            #expect(ChildProcess.exitCode(await daemon.waitForExit()) == 0)
        }
    }

    /// A daemon killed -9 during a large download, started again, continues it from its last
    /// checkpoint; a client attached before and after sees one coherent history: started,
    /// started again from the checkpoint, completed once, in sequence order.
    @Test func daemonKilledDuringLargeDownloadContinues() async throws {
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            let (state, out, socket) = (workspace.state, workspace.out, workspace.socket)
            let size = 48 << 20
            let configuration = BackgroundSession.Configuration(endpoint: .unixSocket(path: socket), startsDaemon: false, eventPollWait: .seconds(2))

            var daemon = try await Self.startDaemon(socket: socket, state: state, out: out)
            let before = try await BackgroundSession(identifier: "big", configuration: configuration)
            let id = try await before.add(DownloadRequest(
                // Held at 24 MiB until the daemon is dead: unfinished at the kill however slow the machine.
                url: URL(string: server.url("/file/big.bin", [
                    "size": "\(size)", "seed": "9", "rate": "\(12 << 20)", "key": "big", "hold": "\(24 << 20)",
                ]))!,
                directory: out)).id
            // Past the first checkpoint (16 MiB by default), then kill the daemon.
            for try await event in before.events() {
                if case .progress(let progressID, let progress) = event.kind, progressID == id, progress.completedBytes > 20 << 20 { break }
            }
            daemon.send(SIGKILL)
            _ = await daemon.waitForExit()
            await before.close()
            server.release(key: "big")

            daemon = try await Self.startDaemon(socket: socket, state: state, out: out)
            let after = try await BackgroundSession(identifier: "big", configuration: configuration)
            var history: [DownloadEvent] = []
            for try await event in after.events() where event.sequence != nil {
                history.append(event)
                if case .finished(let result) = event.kind, result.file != nil { break }
            }
            #expect(history.map(\.sequence) == history.map(\.sequence).sorted { ($0 ?? 0) < ($1 ?? 0) })
            let starts = history.compactMap { event -> Int64? in
                if case .started(_, let resumedFrom) = event.kind { return resumedFrom }
                return nil
            }
            #expect(starts.count == 2)
            let resumedFrom = try #require(starts.last)
            #expect(resumedFrom >= 16 << 20, "the second start continues from the checkpoint")
            #expect(history.filter { if case .finished(let result) = $0.kind { result.file != nil } else { false } }.count == 1)
            #expect(server.bytesSent(forKey: "big") < size + (16 << 20) + (4 << 20), "only the bytes after the checkpoint were fetched again")
            let info = try await after.info(id)
            #expect(info.state == .completed)
            let path = try #require(info.fileURL?.path)
            #expect(FileManager.default.contents(atPath: path).map(Array.init) == TestContent.bytes(seed: 9, size: size))
            await after.close()
            daemon.send(SIGTERM)
            #expect(ChildProcess.exitCode(await daemon.waitForExit()) == 0)
        }
    }
}
