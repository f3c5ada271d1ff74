import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A fleet never reports a file as done before it is in place (`DownloadManager+FleetPlacement`):
/// managers on one database of the test cluster, each on its own store as a daemon would be,
/// downloading from the in-process test server.
@Suite("Fleet placement", .timeLimit(.minutes(5)))
struct FleetPlacementTests {
    /// A fleet member on its own store, claiming and renewing (leases of 30 s, as a daemon's
    /// default: a loaded machine that delays a renewal does not lose one; a claim poll of
    /// 200 ms), with an outbox as a daemon keeps one.
    static func member(
        _ fixture: LeaseFixture, slots: Int = 8, operationTimeLimit: Duration = PostgresStore.defaultOperationTimeLimit
    ) async throws -> DownloadManager {
        var configuration = Support.fastConfiguration()
        configuration.keepsEventOutbox = true
        configuration.fleet = FleetMembership(slots: slots, leaseDuration: .seconds(30), claimInterval: .milliseconds(200))
        let store = try await fixture.daemon(operationTimeLimit: operationTimeLimit)
        let manager = DownloadManager(configuration: configuration, store: store, session: fixture.session)
        try await manager.restore(continueInterrupted: true)
        await manager.startFleet()
        return manager
    }

    /// The session's outbox, oldest first.
    static func events(_ store: any DownloadStoring, session: String) async throws -> [StoredEvent] {
        try await store.events(session: session, after: 0, limit: 100_000)
    }

    /// Checks that each group's one `groupCompleted` follows every member's own `completed`.
    static func expectMembersBeforeTheirGroup(_ events: [StoredEvent], groups: [String: [DownloadID]]) {
        for (name, ids) in groups {
            let ends = events.filter { $0.kind == .groupCompleted && $0.group == name }
            #expect(ends.count == 1, "group \(name) completed \(ends.count) times")
            guard let end = ends.first else { continue }
            for id in ids {
                let completed = events.filter { $0.kind == .completed && $0.download == id }
                #expect(completed.count == 1, "\(id) has \(completed.count) completed events")
                #expect(completed.allSatisfy { $0.sequence < end.sequence }, "\(id)'s completed event follows its group's")
            }
            #expect(Set(end.completed ?? []) == Set(ids), "the group event lists every member as completed")
        }
    }

    /// Two members share 30 small downloads in 6 groups, members finishing at once in batches.
    /// Whenever a group's event appears in the shared outbox (read as fast as the store
    /// answers), every file of that group is in place; each member's `completed` event comes
    /// before its group's, and each group completes once.
    @Test func aGroupCompletesOnlyOnceEveryMembersFileIsInPlace() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 16))
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let out = try temporary.subdirectory("out")
            let a = try await Self.member(fixture)
            let b = try await Self.member(fixture)
            try await Support.shuttingDown([a, b]) {
                var groups: [String: [DownloadID]] = [:]
                var files: [String: [URL]] = [:]
                for g in 0..<6 {
                    let names = (0..<5).map { "g\(g)-\($0).bin" }
                    let requests = names.enumerated().map { n, name in
                        Support.request(server, "/file/\(name)", ["size": "20000", "seed": "\(g * 10 + n + 1)"], in: out, name: name)
                    }
                    groups["g\(g)"] = try await a.addMembers(requests, toGroup: "g\(g)")
                    files["g\(g)"] = names.map { out.appendingPathComponent($0) }
                }
                var seen: Set<String> = []
                var last: Int64 = 0
                var missing: [String] = []
                let explaining: () async -> String = {
                    let rows = (try? await fixture.sql("""
                        SELECT string_agg(groupName || ':' || state || ':' || coalesce(leaseOwner, '-') || ':' || leaseEpoch || ':' || attempts || ':' || coalesce(error, '-'), ' ' ORDER BY position)
                        FROM haul.download WHERE state <> 'completed'
                        """)) ?? "?"
                    return "groups seen: \(seen.sorted()); rows: \(rows)"
                }
                try await waitUntil("every group's event in the outbox", within: .seconds(150), maxInterval: .milliseconds(2), explaining: explaining) {
                    for event in try await fixture.store.events(session: fixture.session, after: last, limit: 1_000) {
                        last = event.sequence
                        guard event.kind == .groupCompleted, let name = event.group else { continue }
                        seen.insert(name)
                        for file in files[name] ?? [] where !FileManager.default.fileExists(atPath: file.path) {
                            missing.append(file.lastPathComponent)
                        }
                    }
                    return seen.count == groups.count
                }
                #expect(missing.isEmpty, "files not in place when their group's event was in the store: \(missing)")
                let events = try await Self.events(fixture.store, session: fixture.session)
                Self.expectMembersBeforeTheirGroup(events, groups: groups)
                for (g, urls) in files {
                    for (n, url) in urls.enumerated() {
                        let seed = UInt64(Int(g.dropFirst())! * 10 + n + 1)
                        #expect(Support.contents(url) == TestContent.bytes(seed: seed, size: 20_000), "\(url.lastPathComponent)")
                    }
                }
                #expect(Support.leftovers(out).isEmpty)
            }
        }
    }

    /// An owner killed after writing its placement intents and before completing: one file
    /// still `.haul-KEY.done` (killed before its rename), one renamed (killed before the
    /// completion). Both rows say running, with their intents, under an expired lease. Another
    /// member claims them, places the `.done` file and finds the other, fetching nothing: each
    /// file placed once, each row completed with its lease given back, the group completed
    /// once, after both members' events.
    @Test func aPlacementItsKilledOwnerLeftIsFinishedOnceByTheNext() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let out = try temporary.subdirectory("out")
            let sizes = [3_000, 4_000]
            let requests = ["left.bin", "renamed.bin"].enumerated().map { (n: Int, name: String) -> DownloadRequest in
                Support.request(server, "/file/\(name)", ["size": "\(sizes[n])", "seed": "\(n + 41)"], in: out, name: name)
            }
            // As the killed owner left them: the first verified and marked `.done`, the second
            // already at its name.
            let leftPart = PartFile(directory: out.path, key: PartKey(for: requests[0]).description)
            try Data(TestContent.bytes(seed: 41, size: sizes[0])).write(to: URL(fileURLWithPath: leftPart.verifiedPath))
            let renamed = out.appendingPathComponent("renamed.bin")
            try Data(TestContent.bytes(seed: 42, size: sizes[1])).write(to: renamed)
            var rows: [StoredDownload] = []
            for (n, path) in [leftPart.verifiedPath, renamed.path].enumerated() {
                let file = try #require(SystemCalls.describe(path))
                let intent = PlacementIntent(
                    directory: out.path, name: requests[n].fileName!, policy: .rename,
                    device: file.identity.device, inode: file.identity.inode, length: file.size)
                var row = StoreTests.minimal(n + 1, session: fixture.session, group: "left")
                row.kept = KeptRequest(requests[n])
                row.partKey = PartKey(for: requests[n]).description
                row.state = .running
                row.expectedLength = Int64(sizes[n])
                row.durableOffset = Int64(sizes[n])
                row.placement = intent
                row.attempts = 1
                rows.append(row)
            }
            try await fixture.store.save(rows)
            let ids = rows.map(\.id)
            let killed = try await fixture.store.claim(session: fixture.session, for: "killed", upTo: 8, leaseFor: .seconds(60))
            #expect(Set(killed.map(\.lease.id)) == Set(ids))
            try await fixture.expire(ids)

            let next = try await Self.member(fixture)
            let events = try await Support.shuttingDown([next]) {
                try await waitForValue("the group's event in the outbox", within: .seconds(150)) {
                    let events = try await Self.events(fixture.store, session: fixture.session)
                    return events.contains { $0.kind == .groupCompleted } ? events : nil
                }
            }
            Self.expectMembersBeforeTheirGroup(events, groups: ["left": ids])
            #expect(events.first { $0.kind == .groupCompleted }?.completed == ids, "in queue order")
            #expect(Support.listing(out) == ["left.bin", "renamed.bin"], "each file placed once, nothing left over")
            #expect(Support.contents(out.appendingPathComponent("left.bin")) == TestContent.bytes(seed: 41, size: sizes[0]))
            #expect(Support.contents(renamed) == TestContent.bytes(seed: 42, size: sizes[1]))
            #expect(server.requests(forKey: "/file/left.bin").isEmpty && server.requests(forKey: "/file/renamed.bin").isEmpty)
            let keys = ids.map { String(Int64(bitPattern: $0.rawValue)) }.joined(separator: ",")
            let stored = try await fixture.sql("""
                SELECT string_agg(state || ' ' || coalesce(leaseOwner, 'none') || ' ' || leaseEpoch, ', ' ORDER BY position)
                FROM haul.download WHERE id IN (\(keys))
                """)
            #expect(stored == "completed none 2, completed none 2", "completed by the next owner (epoch 2), leases given back")
        }
    }

    /// A fleet's `groupCompleted` lists the members by outcome, read from the store, as one
    /// daemon's lists them: the same group (four members added held back; one canceled, then
    /// the others resumed: one failing with 404, two completing) gives the same lists on one SQLite manager and in a fleet.
    @Test func aFleetsGroupEventListsItsMembersAsOneDaemonsDoes() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            /// Runs the group on `manager`; returns its event's lists as member names.
            func run(
                _ manager: DownloadManager, in out: URL, events: @escaping () async throws -> [StoredEvent]
            ) async throws -> [[String]] {
                // Added held back, so that no member finishes before the one canceled.
                let names = ["c.bin", "a.bin", "f.bin", "b.bin"]
                let ids = try await manager.addNew(names.map { name in
                    Support.request(server, "/file/\(name)", name == "f.bin" ? ["status": "404"] : ["size": "2000"], in: out, name: name)
                }, group: "mixed", paused: true)
                try await manager.cancel(ids[0])
                for id in ids.dropFirst() { try await manager.resume(id) }
                let byID = Dictionary(uniqueKeysWithValues: zip(ids, names))
                let end = try await waitForValue("the group's event in the outbox", within: .seconds(150), explaining: {
                    let kinds = ((try? await events()) ?? []).map { "\($0.kind)" }.joined(separator: " ")
                    return "\(manager.fleetOwner == nil ? "one daemon" : "fleet"): \(await Support.downloadStates(manager)); events: \(kinds)"
                }) {
                    try await events().first { $0.kind == .groupCompleted && $0.group == "mixed" }
                }
                return [end.completed, end.failed, end.canceled].map { ($0 ?? []).map { byID[$0] ?? "?" } }
            }
            var local = Support.fastConfiguration()
            local.keepsEventOutbox = true
            let alone = DownloadManager(configuration: local)
            let oneDaemon = try await Support.shuttingDown([alone]) {
                try await run(alone, in: try temporary.subdirectory("alone")) {
                    // As `haul.events` reads one daemon's outbox: events still in memory are written first.
                    try await alone.storedEvents(after: 0, limit: 100_000)
                }
            }
            #expect(oneDaemon == [["a.bin", "b.bin"], ["f.bin"], ["c.bin"]])

            let fixture = try await LeaseFixture.make(SessionSettings())
            let member = try await Self.member(fixture)
            let fleet = try await Support.shuttingDown([member]) {
                try await run(member, in: try temporary.subdirectory("fleet")) {
                    try await Self.events(fixture.store, session: fixture.session)
                }
            }
            #expect(fleet == oneDaemon)
        }
    }
}
