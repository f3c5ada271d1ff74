import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// Pause, resume and cancel through a daemon that does not hold the download
/// (`DownloadManager+FleetControl`): managers on one database of the test cluster, each on its
/// own store as a daemon would be, with leases of 30 s (renewed every 10 s, so a stop within
/// a few seconds came through the `haul_queue` notification, not a renewal).
@Suite("Fleet control", .timeLimit(.minutes(5)))
struct FleetControlTests {
    /// The members a test started, shut down when it ends, failed or not (a manager released
    /// without its shutdown stops the test process).
    actor Members {
        private var started: [DownloadManager] = []

        func start(_ fixture: LeaseFixture) async throws -> DownloadManager {
            let member = try await FleetPlacementTests.member(fixture)
            started.append(member)
            return member
        }

        func shutdown() async {
            for member in started { await member.shutdown() }
            started = []
        }
    }

    /// Runs `body` with a test server, an output directory and `Members`, shutting the members
    /// down however it ends.
    static func withFleet(
        _ settings: SessionSettings = SessionSettings(), _ body: (LeaseFixture, TestServer, URL, Members) async throws -> Void
    ) async throws {
        let fixture = try await LeaseFixture.make(settings)
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let out = try temporary.subdirectory("out")
            let members = Members()
            do {
                try await body(fixture, server, out, members)
            } catch {
                await members.shutdown()
                throw error
            }
            await members.shutdown()
        }
    }

    /// What `SessionHost` does for a daemon: each `haul_control` notification reaches the manager.
    static func forwardingNotifications(to manager: DownloadManager) -> Task<Void, Never>? {
        guard let changes = manager.storeChanges else { return nil }
        let stream = changes.controlRequests()
        return Task {
            for await _ in stream { manager.fleetNotified() }
        }
    }

    /// `state|leaseOwner|controlRequest|durableOffset` of the download's row.
    static func row(_ fixture: LeaseFixture, _ id: DownloadID) async throws -> String {
        try await fixture.sql("""
            SELECT state || '|' || coalesce(leaseOwner, '-') || '|' || coalesce(controlRequest, '-') || '|' || durableOffset
            FROM haul.download WHERE id = \(Int64(bitPattern: id.rawValue))
            """)
    }

    /// `state|leaseOwner` of the download's row (columns of every schema version since leases).
    static func lease(_ fixture: LeaseFixture, _ id: DownloadID) async throws -> String {
        try await fixture.sql("""
            SELECT state || '|' || coalesce(leaseOwner, '-') FROM haul.download WHERE id = \(Int64(bitPattern: id.rawValue))
            """)
    }

    static func events(_ fixture: LeaseFixture, _ kind: StoredEvent.Kind, of id: DownloadID) async throws -> Int {
        try await fixture.store.events(session: fixture.session, after: 0, limit: 100_000)
            .filter { $0.kind == kind && $0.download == id }.count
    }

    /// A slow download running on `a` (its first response throttled to 40 kB/s, so it runs for
    /// minutes even on a loaded machine; a resumed one is not throttled).
    static func runningOnA(
        _ fixture: LeaseFixture, _ server: TestServer, _ out: URL, _ members: Members, key: String, size: Int
    ) async throws -> (a: DownloadManager, id: DownloadID, request: DownloadRequest) {
        let a = try await members.start(fixture)
        let request = Support.request(
            server, "/file/\(key).bin", ["size": "\(size)", "seed": "7", "rate": "40000", "rateStart": "0", "key": key],
            in: out, name: "\(key).bin")
        let id = try await a.addMembers([request], toGroup: key)[0]
        let owner = try #require(a.fleetOwner)
        try await waitUntil("the download running on a", within: .seconds(30)) {
            let stored = try await Self.row(fixture, id)
            let received = await a.snapshot(id)?.progress.completedBytes ?? 0
            return stored.hasPrefix("running|\(owner)|") && received > 0
        }
        return (a, id, request)
    }

    /// B pauses a download A runs: A stops it within seconds (its transfer ended, the row
    /// paused with its bytes and no lease); B resumes it, and it completes once, continued
    /// from its bytes, with the right contents.
    @Test func aPauseThroughAnotherDaemonStopsItsOwnerAndAResumeFinishesIt() async throws {
        try await Self.withFleet { fixture, server, out, members in
            let size = 4_000_000
            let (a, id, _) = try await Self.runningOnA(fixture, server, out, members, key: "ctl-pause", size: size)
            let watch = Self.forwardingNotifications(to: a)
            defer { watch?.cancel() }
            let b = try await members.start(fixture)
            let asked = ContinuousClock.now
            try await b.pause(id)
            try await waitUntil("the owner paused it", within: .seconds(8), explaining: { (try? await Self.row(fixture, id)) ?? "?" }) {
                let paused = try await Self.row(fixture, id).hasPrefix("paused|-|-|")
                let stopped = await a.snapshot(id)?.state == .paused
                return paused && stopped
            }
            let stoppedAfter = ContinuousClock.now - asked
            #expect(stoppedAfter < .seconds(8), "stopped \(stoppedAfter) after the pause")
            let sentAtPause = server.bytesSent(forKey: "ctl-pause")
            #expect(sentAtPause < size, "the whole file was sent before the pause")
            #expect(try await Self.events(fixture, .paused, of: id) == 1)
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("ctl-pause.bin").path))

            try await b.resumeThroughFleet(id)
            try await waitUntil("completed after the resume", within: .seconds(60), explaining: { (try? await Self.row(fixture, id)) ?? "?" }) {
                try await Self.row(fixture, id).hasPrefix("completed|-|")
            }
            #expect(Support.contents(out.appendingPathComponent("ctl-pause.bin")) == TestContent.bytes(seed: 7, size: size))
            #expect(try await Self.events(fixture, .completed, of: id) == 1)
            // Continued from its bytes: the later request asked for a range.
            let requests = server.requests(forKey: "ctl-pause")
            #expect(requests.count >= 2)
            #expect(requests.last?.headers.contains { $0.0.lowercased() == "range" } == true, "the resumed request asked for a range")
            #expect(Support.leftovers(out).isEmpty)
        }
    }

    /// B cancels a download A runs: A stops it, the row is canceled, no file is placed and the
    /// part file is gone.
    @Test func aCancelThroughAnotherDaemonStopsItsOwnerAndRemovesThePart() async throws {
        try await Self.withFleet { fixture, server, out, members in
            let (a, id, _) = try await Self.runningOnA(fixture, server, out, members, key: "ctl-cancel", size: 4_000_000)
            let watch = Self.forwardingNotifications(to: a)
            defer { watch?.cancel() }
            let b = try await members.start(fixture)
            let asked = ContinuousClock.now
            try await b.cancel(id)
            try await waitUntil("the owner canceled it", within: .seconds(8), explaining: { (try? await Self.row(fixture, id)) ?? "?" }) {
                let canceled = try await Self.row(fixture, id).hasPrefix("canceled|-|-|")
                let stopped = await a.snapshot(id)?.state == .canceled
                return canceled && stopped
            }
            let stoppedAfter = ContinuousClock.now - asked
            #expect(stoppedAfter < .seconds(8), "stopped \(stoppedAfter) after the cancel")
            #expect(try await Self.events(fixture, .canceled, of: id) == 1)
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("ctl-cancel.bin").path))
            #expect(Support.leftovers(out).isEmpty, "left: \(Support.leftovers(out))")
            // The group of one ended with it.
            let ends = try await fixture.store.events(session: fixture.session, after: 0, limit: 1_000)
                .filter { $0.kind == .groupCompleted && $0.group == "ctl-cancel" }
            #expect(ends.count == 1)
        }
    }

    /// aria2's `pauseAll` through B pauses what A runs, and B writes nothing over A's row.
    @Test func aPauseAllThroughAnotherDaemonPausesWhatItsOwnerRuns() async throws {
        try await Self.withFleet { fixture, server, out, members in
            let (a, id, _) = try await Self.runningOnA(fixture, server, out, members, key: "ctl-all", size: 4_000_000)
            let watch = Self.forwardingNotifications(to: a)
            defer { watch?.cancel() }
            let b = try await members.start(fixture)
            let asked = ContinuousClock.now
            await b.pauseAll()
            try await waitUntil("the owner paused it", within: .seconds(8), explaining: { (try? await Self.row(fixture, id)) ?? "?" }) {
                let paused = try await Self.row(fixture, id).hasPrefix("paused|-|-|")
                let stopped = await a.snapshot(id)?.state == .paused
                return paused && stopped
            }
            let stoppedAfter = ContinuousClock.now - asked
            #expect(stoppedAfter < .seconds(8), "stopped \(stoppedAfter) after pauseAll")
            #expect(server.bytesSent(forKey: "ctl-all") < 4_000_000)
        }
    }

    /// aria2's `unpauseAll` through B resumes a download paused on A (B's memory has never
    /// seen it paused): its row is queued again and a member claims and runs it.
    @Test func anUnpauseAllThroughAnotherDaemonResumesWhatWasPausedOnItsOwner() async throws {
        try await Self.withFleet { fixture, server, out, members in
            let (a, id, _) = try await Self.runningOnA(fixture, server, out, members, key: "ctl-unpause", size: 4_000_000)
            // Opened before the pause: b's record of the download is of it running on a.
            let b = try await members.start(fixture)
            try await a.pause(id)
            try await waitUntil("the row paused", within: .seconds(20), explaining: { (try? await Self.row(fixture, id)) ?? "?" }) {
                try await Self.row(fixture, id).hasPrefix("paused|-|-|")
            }
            let resumed = await b.resumeAllPaused()
            #expect(resumed == [id])
            try await waitUntil("a member running it again", within: .seconds(30), explaining: { (try? await Self.row(fixture, id)) ?? "?" }) {
                let row = try await Self.row(fixture, id)
                return row.hasPrefix("running|") && !row.hasPrefix("running|-|")
            }
        }
    }

    /// docs/fleet.md gap 1: the last unfinished member of a group, paused (so nobody holds it),
    /// is canceled. Its end runs the same group check as a fenced completion: the group
    /// completes once, with its members by outcome.
    @Test func aCancelOfTheLastMemberNobodyHoldsCompletesTheGroup() async throws {
        try await Self.withFleet { fixture, server, out, members in
            let a = try await members.start(fixture)
            let fast = Support.request(server, "/file/fast.bin", ["size": "2000", "seed": "3"], in: out, name: "fast.bin")
            let slow = Support.request(
                server, "/file/slow.bin", ["size": "4000000", "seed": "4", "rate": "20000"], in: out, name: "slow.bin")
            let ids = try await a.addMembers([fast, slow], toGroup: "g")
            // Paused while running here: its end gives the lease back, and nobody holds it.
            let owner = try #require(a.fleetOwner)
            try await waitUntil("the slow member running on a", within: .seconds(30)) {
                let stored = try await Self.lease(fixture, ids[1])
                let received = await a.snapshot(ids[1])?.progress.completedBytes ?? 0
                return stored == "running|\(owner)" && received > 0
            }
            try await a.pause(ids[1])
            try await waitUntil("one member completed, the other paused and unleased", within: .seconds(30)) {
                let done = try await Self.lease(fixture, ids[0]).hasPrefix("completed|-")
                let paused = try await Self.lease(fixture, ids[1]).hasPrefix("paused|-")
                return done && paused
            }
            try await a.cancel(ids[1])
            let explaining: () async -> String = {
                let kinds = (try? await fixture.store.events(session: fixture.session, after: 0, limit: 1_000).map(\.kind.rawValue)) ?? []
                return "rows: \((try? await Self.lease(fixture, ids[0])) ?? "?"), \((try? await Self.lease(fixture, ids[1])) ?? "?"); events \(kinds)"
            }
            var ends: [StoredEvent] = []
            try await waitUntil("the group completed", within: .seconds(15), explaining: explaining) {
                ends = try await fixture.store.events(session: fixture.session, after: 0, limit: 1_000)
                    .filter { $0.kind == .groupCompleted && $0.group == "g" }
                return !ends.isEmpty
            }
            #expect(ends.count == 1)
            #expect(ends.first?.completed == [ids[0]])
            #expect(ends.first?.canceled == [ids[1]])
            #expect(try await Self.lease(fixture, ids[1]).hasPrefix("canceled|-"))
            #expect(Support.leftovers(out).isEmpty, "left: \(Support.leftovers(out))")
        }
    }

    /// A queued download nobody holds (the session's one slot is another daemon's), paused
    /// through B: B takes it for the pause alone and gives it back paused, with its event;
    /// nothing is fetched. Resumed through B, it is queued again and unleased, for any claimer.
    @Test func aQueuedDownloadNobodyHoldsIsPausedAndResumedByTheDaemonAsked() async throws {
        try await Self.withFleet(SessionSettings(maxConcurrentDownloads: 1)) { fixture, server, out, members in
            let request = Support.request(server, "/file/queued.bin", ["size": "5000", "seed": "2", "key": "ctl-queued"], in: out, name: "queued.bin")
            var busy = StoreTests.minimal(1, session: fixture.session)
            busy.state = .running
            var queued = StoreTests.minimal(2, session: fixture.session)
            queued.kept = KeptRequest(request)
            queued.partKey = PartKey(for: request).description
            try await fixture.store.save([busy, queued])
            _ = try await fixture.sql("""
                UPDATE haul.download SET leaseOwner = 'elsewhere', leaseUntil = now() + interval '1 hour', leaseEpoch = 1
                WHERE id = \(Int64(bitPattern: busy.id.rawValue))
                """)
            let b = try await members.start(fixture)
            try await b.pause(queued.id)
            #expect(try await Self.row(fixture, queued.id) == "paused|-|-|0")
            #expect(await b.snapshot(queued.id)?.state == .paused)
            #expect(try await Self.events(fixture, .paused, of: queued.id) == 1)
            try await b.resumeThroughFleet(queued.id)
            #expect(try await Self.row(fixture, queued.id) == "queued|-|-|0")
            #expect(server.requests(forKey: "ctl-queued").isEmpty)
        }
    }

    /// An owner killed -9 after a pause was asked through another daemon: the row says running,
    /// with the request, under an expired lease. The next claimer carries the pause out
    /// instead of running the download: nothing is fetched, the row ends paused and unleased.
    @Test func aPauseItsKilledOwnerDidNotCarryOutIsCarriedOutByTheClaimer() async throws {
        try await Self.withFleet { fixture, server, out, members in
            let request = Support.request(server, "/file/left.bin", ["size": "5000", "seed": "9", "key": "ctl-killed"], in: out, name: "left.bin")
            var row = StoreTests.minimal(1, session: fixture.session, group: "k")
            row.kept = KeptRequest(request)
            row.partKey = PartKey(for: request).description
            row.state = .running
            row.attempts = 1
            try await fixture.store.save([row])
            _ = try await fixture.sql("""
                UPDATE haul.download SET leaseOwner = 'killed', leaseUntil = now() - interval '1 second', leaseEpoch = 1,
                    controlRequest = 'pause' WHERE id = \(Int64(bitPattern: row.id.rawValue))
                """)
            let a = try await members.start(fixture)
            try await waitUntil("the claimer paused it", within: .seconds(20), explaining: { (try? await Self.row(fixture, row.id)) ?? "?" }) {
                try await Self.row(fixture, row.id).hasPrefix("paused|-|-|")
            }
            #expect(server.requests(forKey: "ctl-killed").isEmpty, "the claimer fetched the paused download")
            #expect(await a.snapshot(row.id)?.state == .paused)
        }
    }
}
