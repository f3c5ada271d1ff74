import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Three real `haul daemon`s on one PostgreSQL database and one shared download directory form
/// a fleet (docs/fleet.md): they claim the downloads of one session by lease, within the
/// session's limit counted across the three, and when one is killed -9 in the middle the
/// others take its downloads over once its leases expire.
@Suite("A fleet of daemons on one PostgreSQL database", .serialized, .timeLimit(.minutes(3)))
struct FleetFailoverTests {
    static let groups = 30
    static let filesPerGroup = 2
    /// The session's limit: below the fleet's 3 × 2 local slots, so only the claim keeps it.
    static let sessionLimit = 4
    static let session = "fleet"

    static func size(_ n: Int) -> Int { 60_000 + n * 700 }
    static func name(_ n: Int) -> String { "fleet-\(n).bin" }

    /// A daemon of the fleet, with the fleet ID it printed.
    struct Member {
        let name: String
        let process: LineProcess
        let owner: String
        let socket: String
    }

    static func start(_ name: String, workspace: DaemonWorkspace, store: String) async throws -> Member {
        let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
        let socket = workspace.root.appendingPathComponent("\(name).sock").path
        let state = workspace.root.appendingPathComponent("\(name)-state")
        let process = try LineProcess(executable: haul, arguments: [
            "daemon", "--socket", socket, "--state-dir", state.path, "--no-tcp", "--dir", workspace.out.path, "--store", store,
            "--fleet-slots", "2", "--fleet-lease", "6",
        ])
        let owner = try await firstMatch(in: process.errors, "daemon \(name)'s fleet ID", within: .seconds(120)) { line -> String? in
            guard let found = line.range(of: "fleet member ") else { return nil }
            return String(line[found.upperBound...].prefix { $0 != ":" })
        }
        _ = try await firstElement(of: process.errors, "daemon \(name)'s ready line", within: .seconds(120)) {
            $0.hasPrefix("haul daemon: ready")
        }
        return Member(name: name, process: process, owner: owner, socket: socket)
    }

    static func app(on member: Member) async throws -> BackgroundSession {
        try await BackgroundSession(identifier: session, configuration: BackgroundSession.Configuration(
            endpoint: .unixSocket(path: member.socket), settings: SessionSettings(maxConcurrentDownloads: sessionLimit),
            startsDaemon: false, eventPollWait: .seconds(1)))
    }

    /// Integers of one psql row (`-At`: fields separated by `|`).
    static func integers(_ line: String) -> [Int] {
        line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").compactMap { Int($0) }
    }

    /// 60 files in 30 groups are added through one daemon; all three claim them. Once a fifth
    /// has completed and daemon b holds leases, b is killed -9. Then: every file has its
    /// exact bytes and was placed once; no file was ever sent on two connections at once (the
    /// server's count of bodies in flight per file), so no download ran on two daemons at once;
    /// the downloads b held were taken over (a later epoch, another owner); at no moment were
    /// more bodies in flight than the session's limit; and every group completed exactly once,
    /// seen by an app attached to a surviving daemon and in the store's outbox.
    @Test func aKilledDaemonsDownloadsAreTakenOverAndEveryGroupCompletesOnce() async throws {
        let cluster = try await PostgresCluster.shared()
        let store = try await cluster.makeDatabase()
        let database = String(store.split(separator: "/").last!.split(separator: "?").first!)
        func query(_ sql: String) async throws -> String { try await cluster.psql(sql, database: database) }
        let files = Self.groups * Self.filesPerGroup

        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            var members: [Member] = []
            var stopped: Set<String> = []
            // Whatever fails below, no daemon outlives the test.
            defer {
                for member in members where !stopped.contains(member.name) { member.process.send(SIGKILL) }
            }
            for name in ["a", "b", "c"] {
                members.append(try await Self.start(name, workspace: workspace, store: store))
            }
            let (a, b, c) = (members[0], members[1], members[2])

            let adder = try await Self.app(on: a)
            do {
                for group in 0..<Self.groups {
                    let requests = (0..<Self.filesPerGroup).map { k in
                        let n = group * Self.filesPerGroup + k
                        return DownloadRequest(
                            url: URL(string: server.url("/file/\(Self.name(n))", [
                                "size": "\(Self.size(n))", "seed": "\(n + 1)", "rate": "60000", "key": "fleet-\(n)",
                            ]))!,
                            directory: workspace.out, fileName: Self.name(n))
                    }
                    try await adder.add(requests, toGroup: "g\(group)", ifPresent: .addAnew)
                }
            } catch {
                await adder.close()
                throw error
            }
            await adder.close()

            // b runs some of them while a fifth of the files are done: then it is killed.
            let states = """
                SELECT state, leaseOwner, count(*), max(error) FROM haul.download GROUP BY 1, 2 ORDER BY 1, 2
                """
            try await waitUntil(
                "daemon b to run downloads once a fifth of the files completed", within: .seconds(60),
                explaining: { (try? await query(states)) ?? "?" }
            ) {
                let counts = Self.integers(try await query("""
                    SELECT count(*) FILTER (WHERE state = 'completed'),
                           count(*) FILTER (WHERE leaseOwner = '\(b.owner)' AND state IN ('queued', 'running'))
                    FROM haul.download WHERE session = '\(Self.session)'
                    """))
                return counts.count == 2 && counts[0] >= files / 5 && counts[1] >= 1
            }
            b.process.send(SIGKILL)
            #expect(ChildProcess.terminatingSignal(await b.process.waitForExit()) == SIGKILL)
            stopped.insert(b.name)
            let heldByB = Set(try await query("""
                SELECT id FROM haul.download WHERE session = '\(Self.session)' AND leaseOwner = '\(b.owner)'
                AND state IN ('queued', 'running')
                """).split(separator: "\n").map(String.init))
            #expect(!heldByB.isEmpty, "b held no download when it was killed")

            // a and c finish everything, b's downloads included once its leases expired.
            try await waitUntil(
                "every download completed, no lease left, every group completed", within: .seconds(90),
                explaining: {
                    let rows = (try? await query(states)) ?? "?"
                    let events = (try? await query("""
                        SELECT kind, count(*) FROM haul.event GROUP BY kind ORDER BY kind
                        """)) ?? "?"
                    let stuck = (try? await query("""
                        SELECT id, state, leaseEpoch, error FROM haul.download WHERE state <> 'completed'
                        """)) ?? "?"
                    return rows + "; events: " + events + "; unfinished: " + stuck
                }
            ) {
                let counts = Self.integers(try await query("""
                    SELECT (SELECT count(*) FROM haul.download WHERE session = '\(Self.session)' AND state = 'completed'),
                           (SELECT count(*) FROM haul.download WHERE session = '\(Self.session)' AND leaseOwner IS NOT NULL),
                           (SELECT count(DISTINCT payload::json ->> 'group') FROM haul.event
                            WHERE session = '\(Self.session)' AND kind = 'groupCompleted')
                    """))
                return counts == [files, 0, Self.groups]
            }

            // c stops cleanly (its outbox written); an app attached to a gets every event kept.
            c.process.send(SIGTERM)
            #expect(ChildProcess.exitCode(await c.process.waitForExit()) == 0)
            stopped.insert(c.name)
            let app = try await Self.app(on: a)
            let seen: Result<(groups: [String: Int], files: [String: Int]), any Error>
            do {
                seen = .success(try await withTimeLimit("every kept event through daemon a", within: .seconds(60)) {
                    var groups: [String: Int] = [:]
                    var placed: [String: Int] = [:]
                    for try await event in app.events() {
                        switch event.kind {
                        case .groupCompleted(let summary): groups[summary.name, default: 0] += 1
                        case .finished(let result): if let file = result.file { placed[file.url.lastPathComponent, default: 0] += 1 }
                        case .didFinishEvents: return (groups, placed)
                        default: break
                        }
                    }
                    throw WaitFailure("every kept event through daemon a", .ended)
                })
            } catch {
                seen = .failure(error)
            }
            await app.close()
            let (groupEvents, fileEvents) = try seen.get()
            #expect(groupEvents == Dictionary(uniqueKeysWithValues: (0..<Self.groups).map { ("g\($0)", 1) }),
                    "each group completes exactly once")
            #expect(fileEvents.values.allSatisfy { $0 == 1 }, "each file completes once: \(fileEvents.filter { $0.value > 1 })")
            let storedGroupEvents = try await query("""
                SELECT count(*) FROM haul.event WHERE session = '\(Self.session)' AND kind = 'groupCompleted'
                """)
            #expect(Self.integers(storedGroupEvents) == [Self.groups])

            // Every file right and placed once; never two bodies of one file in flight at once.
            let placed = try FileManager.default.contentsOfDirectory(atPath: workspace.out.path).filter { !$0.hasPrefix(".") }.sorted()
            #expect(placed == (0..<files).map(Self.name).sorted(), "each file placed once, under its own name")
            for n in 0..<files {
                let bytes = FileManager.default.contents(atPath: workspace.out.appendingPathComponent(Self.name(n)).path).map(Array.init)
                #expect(bytes == TestContent.bytes(seed: UInt64(n + 1), size: Self.size(n)), "\(Self.name(n))")
                #expect(server.peakConcurrentResponses(forKey: "fleet-\(n)") == 1, "\(Self.name(n)) was sent twice at once")
            }
            #expect(server.peakConcurrentResponses() <= Self.sessionLimit, "the session's limit held across the fleet")

            // The store: b's downloads were claimed again (a later epoch) by a survivor.
            let epochs = try await query("""
                SELECT id, leaseEpoch FROM haul.download WHERE session = '\(Self.session)'
                """).split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
            #expect(epochs.count == files)
            for row in epochs where row.count == 2 {
                let epoch = Int(row[1]) ?? 0
                #expect(epoch >= 1, "download \(row[0]) completed without a claim")
                if heldByB.contains(row[0]) { #expect(epoch >= 2, "download \(row[0]) of b was not taken over") }
            }

            a.process.send(SIGTERM)
            #expect(ChildProcess.exitCode(await a.process.waitForExit()) == 0)
            stopped.insert(a.name)
        }
    }
}
