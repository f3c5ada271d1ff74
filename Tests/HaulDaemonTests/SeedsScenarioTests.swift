import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// The seeds' scenario end to end, with a real `haul daemon` killed -9: resources of shards,
/// an app that acts once per resource, and a session that answers for every download the app
/// has not acknowledged.
@Suite(.timeLimit(.minutes(10)))
struct SeedsScenarioTests {
    /// The example app's executable, built by `scripts/test` (`swift build` in Examples/Shards).
    static var shardsApp: String? {
        let path = PublicAPITestsRoot.root.appendingPathComponent("Examples/Shards/.build/debug/shards-app").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    static var examplesRequired: Bool { ProcessInfo.processInfo.environment["HAUL_REQUIRE_EXAMPLES"] == "1" }

    /// `Examples/Shards` (a separate package using only Haul's public API), killed -9 while its
    /// daemon is killed -9 too, started again: every shard of the three resources (100, 200 and
    /// 300 shards, 4 at once, in order) is right, and each resource was acted on exactly once.
    @Test(.enabled(if: shardsApp != nil || examplesRequired, "build Examples/Shards first (scripts/test does)"))
    func exampleAppSurvivesKills() async throws {
        let app = try #require(Self.shardsApp, "Examples/Shards/.build/debug/shards-app is missing: run scripts/test")
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            let ledger = workspace.root.appendingPathComponent("ledger.txt").path
            let arguments = [
                "--base", server.url("/file"), "--query", "size=1500&seed={n}&rate=15000&key=shard",
                "--downloads", workspace.out.path, "--ledger", ledger, "--shards", "100,200,300",
                "--socket", workspace.socket, "--daemon-state", workspace.state.path,
            ]
            var daemon = try await BackgroundSessionProcessTests.startDaemon(socket: workspace.socket, state: workspace.state, out: workspace.out)
            let first = try LineProcess(executable: app, arguments: arguments)
            // Part way: the first resource acted on, the second under way.
            _ = try await firstElement(of: first.output, "the app to act on its first resource", within: .seconds(300)) { $0.hasPrefix("ready lesson-1") }
            try await waitUntil("shards of the second resource to arrive", within: .seconds(300)) {
                server.requests(forKey: "shard").count > 130
            }
            first.send(SIGKILL)
            _ = await first.waitForExit()
            daemon.send(SIGKILL)
            _ = await daemon.waitForExit()

            daemon = try await BackgroundSessionProcessTests.startDaemon(socket: workspace.socket, state: workspace.state, out: workspace.out)
            let second = try LineProcess(executable: app, arguments: arguments)
            let done = try await firstElement(of: second.output, "the app's last line", within: .seconds(400)) { $0.hasPrefix("all ") }
            #expect(done == "all 3 resources ready")
            #expect(ChildProcess.exitCode(await second.waitForExit()) == 0)

            let lines = try String(contentsOfFile: ledger, encoding: .utf8).split(separator: "\n")
            let acted = lines.filter { $0.hasPrefix("ready ") }.map { String($0) }
            #expect(acted.sorted() == ["ready lesson-1 100", "ready lesson-2 200", "ready lesson-3 300"], "each resource acted on exactly once")
            for (index, count) in [100, 200, 300].enumerated() {
                for shard in 0..<count {
                    let path = workspace.out.appendingPathComponent("lesson-\(index + 1)/shard-\(shard).bin").path
                    let expected = TestContent.bytes(seed: UInt64(index * 10_000 + shard), size: 1500)
                    #expect(FileManager.default.contents(atPath: path).map(Array.init) == expected, "\(path)")
                }
            }
            #expect(Self.leftovers(workspace.out).isEmpty, "no part file is left")
            daemon.send(SIGTERM)
            _ = await daemon.waitForExit()
        }
    }

    /// 5,010 shards in 30 groups with the default retention (1,000 finished): the app
    /// acknowledges the first 993 completions and goes; the daemon, killed -9 and restarted,
    /// answers a re-attached app for every group with every member and its file, replays every
    /// completion not acknowledged, and none that was.
    @Test func sessionAnswersForWhatTheAppHasNotAcknowledged() async throws {
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            var daemon = try await BackgroundSessionProcessTests.startDaemon(socket: workspace.socket, state: workspace.state, out: workspace.out)
            let configuration = BackgroundSession.Configuration(
                endpoint: .unixSocket(path: workspace.socket), settings: SessionSettings(maxConcurrentDownloads: 4),
                startsDaemon: false, eventPollWait: .seconds(2))
            let sizes = (0..<30).map { [100, 167, 234][$0 % 3] }
            #expect(sizes.reduce(0, +) == 5_010)
            let app = try await BackgroundSession(identifier: "seeds", configuration: configuration)
            var members: [String: Int] = [:]
            for (group, size) in sizes.enumerated() {
                let requests = (0..<size).map { n in
                    DownloadRequest(
                        url: URL(string: server.url("/file/g\(group)-\(n).bin", ["size": "\(200 + n % 300)", "seed": "\(group * 1000 + n)"]))!,
                        directory: workspace.out)
                }
                _ = try await app.add(requests, toGroup: "resource-\(group)", ifPresent: .addAnew)
                members["resource-\(group)"] = size
            }
            // The app handles and acknowledges the first 993 completions, then goes away.
            var acknowledged = Set<DownloadID>()
            for try await event in app.events() {
                if case .finished(let result) = event.kind {
                    try await app.acknowledge(event)
                    acknowledged.insert(result.id)
                    if acknowledged.count == 993 { break }
                }
            }
            await app.close()
            // Everything finishes in the daemon meanwhile; then it is killed -9.
            try await waitUntil("every group to complete", within: .seconds(300)) {
                guard let all = try? await Self.withSession(configuration, { try await $0.downloads() }) else { return false }
                return all.count == 5_010 && all.allSatisfy { $0.state == .completed }
            }
            daemon.send(SIGKILL)
            _ = await daemon.waitForExit()

            daemon = try await BackgroundSessionProcessTests.startDaemon(socket: workspace.socket, state: workspace.state, out: workspace.out)
            let again = try await BackgroundSession(identifier: "seeds", configuration: configuration)
            for (name, count) in members.sorted(by: { $0.key < $1.key }) {
                let summary = try await again.group(named: name).summary()
                #expect(summary.isComplete && summary.results.count == count, "\(name): every member answered for")
                #expect(summary.files.count == count)
                #expect(summary.files.allSatisfy { FileManager.default.fileExists(atPath: $0.url.path) })
            }
            var replayed = Set<DownloadID>()
            for try await event in again.events() {
                if case .finished(let result) = event.kind { replayed.insert(result.id) }
                if case .didFinishEvents = event.kind { break }
            }
            #expect(replayed.isDisjoint(with: acknowledged), "no acknowledged completion is replayed")
            #expect(replayed.union(acknowledged).count == 5_010, "every completion arrives at least once")
            await again.close()
            daemon.send(SIGTERM)
            _ = await daemon.waitForExit()
        }
    }

    static func withSession<T: Sendable>(
        _ configuration: BackgroundSession.Configuration, _ body: (BackgroundSession) async throws -> T
    ) async throws -> T {
        let session = try await BackgroundSession(identifier: "seeds", configuration: configuration)
        defer { Task { await session.close() } }
        return try await body(session)
    }

    static func leftovers(_ directory: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            if name.hasSuffix(".part") { found.append(name) }
        }
        return found
    }
}

/// The repository's root, found from this file.
enum PublicAPITestsRoot {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
