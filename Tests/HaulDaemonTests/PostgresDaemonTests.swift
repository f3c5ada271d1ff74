import AsyncHTTPClient
import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `haul daemon --store postgresql://…` with real processes: the downloads live in the
/// database, so a daemon killed -9 is replaced by another (even on another state directory)
/// that finishes what it left.
@Suite("A daemon on a PostgreSQL store", .serialized, .timeLimit(.minutes(10)))
struct PostgresDaemonTests {
    static func startDaemon(socket: String, state: URL, out: URL, store: String) async throws -> LineProcess {
        let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
        let daemon = try LineProcess(executable: haul, arguments: [
            "daemon", "--socket", socket, "--state-dir", state.path, "--no-tcp", "--dir", out.path, "--store", store,
            // The killed daemon's leases expire after 3 s, not 30: its downloads are taken over then.
            "--fleet-lease", "3",
        ])
        _ = try await firstElement(of: daemon.errors, "the daemon's ready line", within: .seconds(120)) { $0.hasPrefix("haul daemon: ready") }
        return daemon
    }

    static let files = 24
    /// Files not held before the kill: enough for the four completions the test waits for.
    static let freeFiles = 8

    static func size(_ n: Int) -> Int { 150_000 + n * 1_000 }

    /// A group of 24 downloads is added to a daemon on PostgreSQL, which is killed -9 once a
    /// few completed. A new daemon, with an empty state directory, on the same database
    /// finishes the group: every file has its exact bytes, each is placed once, the files that
    /// had completed are not fetched again, and no SQLite store was ever made.
    @Test func killedDaemonsGroupIsFinishedByTheNextOnTheSameDatabase() async throws {
        let store = try await PostgresCluster.shared().makeDatabase()
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            let out = workspace.out
            let firstState = workspace.root.appendingPathComponent("first-state")
            let secondState = workspace.root.appendingPathComponent("second-state")
            // The first eight run freely; the others are held part way until the first daemon
            // is dead, so that some are still under way at the kill however slow the machine.
            let requests = (0..<Self.files).map { n in
                var options = ["size": "\(Self.size(n))", "seed": "\(n + 1)", "rate": "300000", "key": "pg-\(n)"]
                if n >= Self.freeFiles { options["hold"] = "50000" }
                return DownloadRequest(
                    url: URL(string: server.url("/file/pg-\(n).bin", options))!, directory: out, fileName: "pg-\(n).bin")
            }

            let first = try await Self.startDaemon(socket: workspace.socket, state: firstState, out: out, store: store)
            let endpoint = BackgroundSession.Configuration(endpoint: .unixSocket(path: workspace.socket), startsDaemon: false, eventPollWait: .seconds(1))
            let before = try await BackgroundSession(identifier: "pg", configuration: endpoint)
            try await before.add(requests, toGroup: "batch", ifPresent: .addAnew)
            // Closed whatever happens: a session left open traps when it goes.
            let waitedForSome: Result<Set<String>, any Error>
            do {
                waitedForSome = .success(try await withTimeLimit("4 downloads to complete", within: .seconds(120)) {
                    var names: Set<String> = []
                    for try await event in before.events() {
                        if case .finished(let result) = event.kind, let file = result.file {
                            names.insert(file.url.lastPathComponent)
                            if names.count >= 4 { break }
                        }
                    }
                    return names
                })
            } catch {
                waitedForSome = .failure(error)
            }
            first.send(SIGKILL)
            await before.close()
            let completedBeforeKill = try waitedForSome.get()
            #expect(ChildProcess.terminatingSignal(await first.waitForExit()) == SIGKILL)
            #expect(!FileManager.default.fileExists(atPath: firstState.appendingPathComponent("haul.sqlite").path),
                    "a daemon on PostgreSQL keeps no SQLite store")

            for n in Self.freeFiles..<Self.files { server.release(key: "pg-\(n)") }

            let socket = workspace.root.appendingPathComponent("second.sock").path
            let second = try await Self.startDaemon(socket: socket, state: secondState, out: out, store: store)
            let after = try await BackgroundSession(
                identifier: "pg",
                configuration: BackgroundSession.Configuration(endpoint: .unixSocket(path: socket), startsDaemon: false, eventPollWait: .seconds(1)))
            let waitedForGroup: Result<GroupSummary, any Error>
            do {
                waitedForGroup = .success(try await firstMatch(
                    in: after.events(), "the group to complete on the second daemon", within: .seconds(180)
                ) { event in
                    if case .groupCompleted(let summary) = event.kind, summary.name == "batch" { return summary }
                    return nil
                })
            } catch {
                waitedForGroup = .failure(error)
            }
            await after.close()
            let completed: GroupSummary
            do {
                completed = try waitedForGroup.get()
            } catch {
                second.send(SIGKILL)
                _ = await second.waitForExit()
                throw error
            }
            // Every member, those the first daemon finished included (a member whose lease
            // lapsed locally while its completion was being written was once left out).
            #expect(completed.completed.count == Self.files)
            #expect(completed.failed.isEmpty)

            let placed = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { !$0.hasPrefix(".") }.sorted()
            #expect(placed == (0..<Self.files).map { "pg-\($0).bin" }.sorted(), "each file placed once, under its own name")
            for n in 0..<Self.files {
                let bytes = FileManager.default.contents(atPath: out.appendingPathComponent("pg-\(n).bin").path).map(Array.init)
                #expect(bytes == TestContent.bytes(seed: UInt64(n + 1), size: Self.size(n)), "pg-\(n).bin")
            }
            for name in completedBeforeKill {
                let key = String(name.dropLast(".bin".count))
                #expect(server.requests(forKey: key).count == 1, "\(name) had completed and was fetched again")
            }
            // The second daemon took the first one's leased downloads over, and says so.
            let metrics = try PrometheusText(parsing: try await Self.scrapeMetrics(socket: socket))
            #expect(metrics.types[ManagerMetrics.Name.takeovers] == "counter")
            #expect((metrics.value(ManagerMetrics.Name.takeovers) ?? 0) >= 1, "no takeover counted")
            #expect(metrics.value(ManagerMetrics.Name.leasesLost) == 0)
            second.send(SIGTERM)
            #expect(ChildProcess.exitCode(await second.waitForExit()) == 0)
        }
    }

    /// `GET /metrics` on the daemon's socket: the body.
    static func scrapeMetrics(socket: String) async throws -> String {
        try await withHTTPClient { client in
            let url = try #require(URL(httpURLWithSocketPath: socket, uri: "/metrics"))
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(20))
            #expect(response.status.code == 200)
            return String(buffer: try await response.body.collect(upTo: 4 << 20))
        }
    }

    @Test func badURLAndUnreachableServerAreClearErrors() async throws {
        let workspace = try DaemonWorkspace()
        defer { workspace.remove() }
        let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
        let common = ["daemon", "--socket", workspace.socket, "--state-dir", workspace.state.path, "--no-tcp"]

        let bad = try LineProcess(executable: haul, arguments: common + ["--store", "postgresql://127.0.0.1/haul"])
        #expect(ChildProcess.exitCode(await bad.waitForExit()) == 2)

        let port = try LoopbackPort.free()
        let unreachable = try LineProcess(executable: haul, arguments: common + [
            "--store", "postgresql://haul@127.0.0.1:\(port)/haul?sslmode=disable", "--store-wait", "1",
        ])
        let message = try await firstElement(of: unreachable.errors, "the daemon's error", within: .seconds(60)) { $0.contains("error") }
        #expect(message.contains("postgresql://haul@127.0.0.1:\(port)/haul"))
        #expect(message.contains("cannot be reached"))
        #expect(ChildProcess.exitCode(await unreachable.waitForExit()) == 15)
    }
}
