import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two real `haul daemon`s on one PostgreSQL database: an app attached to the one that does
/// not run a download pauses, resumes and cancels it (`haul.pause`, `haul.resume`,
/// `haul.cancel`), and the daemon that runs it obeys. Leases of 30 s (renewed every 10 s): a
/// stop within 8 s came through the `haul_queue` notification `SessionHost` forwards.
@Suite("Control through another daemon", .serialized, .timeLimit(.minutes(5)))
struct FleetControlDaemonTests {
    static func startDaemon(socket: String, state: URL, out: URL, store: String) async throws -> LineProcess {
        let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
        let daemon = try LineProcess(executable: haul, arguments: [
            "daemon", "--socket", socket, "--state-dir", state.path, "--no-tcp", "--dir", out.path, "--store", store,
            "--fleet-lease", "30",
        ])
        _ = try await firstElement(of: daemon.errors, "the daemon's ready line", within: .seconds(120)) { $0.hasPrefix("haul daemon: ready") }
        return daemon
    }

    @Test func anAppOnTheOtherDaemonPausesResumesAndCancels() async throws {
        let cluster = try await PostgresCluster.shared()
        let store = try await cluster.makeDatabase()
        let database = String(store.split(separator: "/").last!.split(separator: "?").first!)
        let row: (DownloadID) async throws -> String = { id in
            try await cluster.psql(
                "SELECT state || '|' || coalesce(leaseOwner, '-') FROM haul.download WHERE id = \(Int64(bitPattern: id.rawValue))",
                database: database)
        }
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            let out = workspace.out
            let requests = ["d-pause", "d-cancel"].map { key in
                DownloadRequest(
                    url: URL(string: server.url("/file/\(key).bin", ["size": "4000000", "seed": "5", "rate": "40000", "rateStart": "0", "key": key]))!,
                    directory: out, fileName: "\(key).bin")
            }
            let a = try await Self.startDaemon(
                socket: workspace.socket, state: workspace.root.appendingPathComponent("a-state"), out: out, store: store)
            var b: LineProcess?
            var sessions: [BackgroundSession] = []
            func stopAll() async {
                for session in sessions { await session.close() }
                for daemon in [a, b].compactMap({ $0 }) {
                    daemon.send(SIGTERM)
                    _ = await daemon.waitForExit()
                }
            }
            do {
                let onA = try await BackgroundSession(
                    identifier: "ctl", configuration: .init(endpoint: .unixSocket(path: workspace.socket), startsDaemon: false, eventPollWait: .seconds(1)))
                sessions.append(onA)
                let group = try await onA.add(requests, toGroup: "ctl", ifPresent: .addAnew)
                let members = try await group.downloads()
                let ids = try ["d-pause.bin", "d-cancel.bin"].map { name in
                    try #require(members.first { $0.request.fileName == name }?.id, "\(name) in the group")
                }
                try await waitUntil("both running on a", within: .seconds(30)) {
                    for id in ids {
                        let stored = try await row(id)
                        if !stored.hasPrefix("running|") || stored.hasSuffix("|-") { return false }
                    }
                    return true
                }
                let socketB = workspace.root.appendingPathComponent("b.sock").path
                b = try await Self.startDaemon(socket: socketB, state: workspace.root.appendingPathComponent("b-state"), out: out, store: store)
                let onB = try await BackgroundSession(
                    identifier: "ctl", configuration: .init(endpoint: .unixSocket(path: socketB), startsDaemon: false, eventPollWait: .seconds(1)))
                sessions.append(onB)

                var asked = ContinuousClock.now
                try await onB.pause(ids[0])
                try await waitUntil("paused by its owner", within: .seconds(8)) { try await row(ids[0]) == "paused|-" }
                #expect(ContinuousClock.now - asked < .seconds(8))
                #expect(server.bytesSent(forKey: "d-pause") < 4_000_000)
                try await onB.resume(ids[0])
                try await waitUntil("completed after the resume", within: .seconds(60)) { try await row(ids[0]) == "completed|-" }
                let placed = FileManager.default.contents(atPath: out.appendingPathComponent("d-pause.bin").path).map(Array.init)
                #expect(placed == TestContent.bytes(seed: 5, size: 4_000_000))

                asked = ContinuousClock.now
                try await onB.cancel(ids[1])
                try await waitUntil("canceled by its owner", within: .seconds(8)) { try await row(ids[1]) == "canceled|-" }
                #expect(ContinuousClock.now - asked < .seconds(8))
                #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("d-cancel.bin").path))
                let left = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".haul-") }
                #expect(left.isEmpty, "left: \(left)")
            } catch {
                await stopAll()
                throw error
            }
            await stopAll()
        }
    }
}
