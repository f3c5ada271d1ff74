import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A fleet member whose database goes away for a while (restarted, its connections ended by
/// an administrator) waits for it and goes on: writes that failed are tried again by
/// themselves, verified files wait for their intents to be written, and nothing is paused for
/// a reason nobody can act on.
@Suite("Fleet: the store going away", .timeLimit(.minutes(8)))
struct FleetStoreOutageTests {
    /// Every connection to the test database but the caller's is ended, over and over, while a
    /// member downloads a group of 48 small files (six rounds, each once two more completed
    /// since the one before, until 24 did; each end is a write, and writes meet ended
    /// connections). Then every file is in place with its bytes,
    /// every download completed once, and the group completed once. Before, a placement whose
    /// intent met an ended connection (57P01, `admin_shutdown`) paused its download with a
    /// file-system error, and its group never completed.
    @Test func downloadsGoOnWhileTheDatabaseEndsConnections() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 8))
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let out = try temporary.subdirectory("out")
            let names = (0..<48).map { "o\($0).bin" }
            let requests = names.enumerated().map { n, name in
                Support.request(server, "/file/\(name)", ["size": "30000", "seed": "\(n + 1)", "rate": "100000"], in: out, name: name)
            }
            // A store operation stuck on an ended connection is given up after 20 s here (60 s
            // by default): the rounds below would otherwise wait a minute for each. Not less:
            // with the whole suite running, a plain add has taken more than 5 s.
            let member = try await FleetPlacementTests.member(fixture, operationTimeLimit: .seconds(20))
            let (ids, failedWrite) = try await Support.shuttingDown([member]) {
                let ids = try await member.addMembers(requests, toGroup: "outage")
                func completed() async throws -> Int { try await Int(fixture.sql("SELECT count(*) FROM haul.download WHERE state = 'completed'")) ?? 0 }
                // First, connections are ended while one of the member's writes waits for a
                // lock the test holds: at least one write meets an ended connection in its
                // middle, however the rounds below fall (a loaded CI run once saw none fail).
                try await Self.endConnectionsDuringAWrite(fixture)
                // Rounds of ended connections, each once two more downloads completed since the
                // one before: the store keeps failing writes, and there is progress in between.
                var endings = 0
                var done = 0
                while done < 24 && endings < 6 {
                    _ = try await fixture.sql("""
                        SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                        WHERE datname = current_database() AND pid <> pg_backend_pid()
                        """)
                    endings += 1
                    let before = done
                    let stuck: () async -> String = {
                        let rows = (try? await fixture.sql("""
                            SELECT string_agg(state || ':' || coalesce(leaseOwner, '-') || ':' || (leaseUntil > now())::text || ':' || coalesce(error, '-'), ' ') FROM haul.download WHERE state <> 'completed' AND (state <> 'queued' OR leaseOwner IS NOT NULL)
                            """)) ?? "?"
                        let local = await member.downloads().map { "\($0.state)" }
                        let counts = Dictionary(local.map { ($0, 1) }, uniquingKeysWith: +)
                        return "rows: \(rows); local: \(counts); fleet: \(await member.fleetDebugDescription()); last write error: \(await member.lastWriteError?.message ?? "-")"
                    }
                    done = try await waitForValue("two more downloads to complete after \(endings) rounds", within: .seconds(90), explaining: stuck) {
                        let now = try await completed()
                        return now >= before + 2 ? now : nil
                    }
                }
                let explaining: () async -> String = {
                    let rows = (try? await fixture.sql("""
                        SELECT string_agg(state || ':' || coalesce(error, '-'), ' ') FROM haul.download WHERE state <> 'completed'
                        """)) ?? "?"
                    return "after \(endings) rounds of ended connections; unfinished: \(rows)"
                }
                try await waitUntil("the group's end in the outbox", within: .seconds(120), explaining: explaining) {
                    try await FleetPlacementTests.events(fixture.store, session: fixture.session).contains { $0.kind == .groupCompleted }
                }
                return (ids, await member.lastWriteError)
            }
            // A write that met an ended connection either failed (and was tried again) or had
            // its commit looked up (`PostgresCommitOutcomeTests`).
            let store = await member.store
            let interrupted = try #require(store as? PostgresStore).transactionsInterrupted.withLockedValue { $0 }
            #expect(failedWrite != nil || interrupted > 0, "no transaction met an ended connection: the test did not test anything")
            let events = try await FleetPlacementTests.events(fixture.store, session: fixture.session)
            FleetPlacementTests.expectMembersBeforeTheirGroup(events, groups: ["outage": ids])
            #expect(try await fixture.sql("SELECT count(*) FROM haul.download WHERE state <> 'completed'") == "0")
            for (n, name) in names.enumerated() {
                let bytes = Support.contents(out.appendingPathComponent(name))
                #expect(bytes == TestContent.bytes(seed: UInt64(n + 1), size: 30_000), "\(name) is missing or wrong")
            }
            #expect(Support.leftovers(out).isEmpty)
        }
    }
}

extension FleetStoreOutageTests {
    /// Ends every connection to the test database but the caller's while one of them waits
    /// for a lock the test holds on the downloads' table (a member's write, blocked): tries
    /// again, with a new hold, until such a wait was seen.
    static func endConnectionsDuringAWrite(_ fixture: LeaseFixture) async throws {
        for _ in 0..<20 {
            let holder = Task { _ = try? await fixture.sql("BEGIN; LOCK TABLE haul.download IN SHARE MODE; SELECT pg_sleep(4); COMMIT;") }
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(3500))
            var waiting = false
            while !waiting && ContinuousClock.now < deadline {
                waiting = try await fixture.sql("""
                    SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """) != "0"
                if !waiting { try await Task.sleep(for: .milliseconds(50)) }
            }
            if waiting {
                _ = try await fixture.sql("""
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()
                    """)
            }
            await holder.value
            if waiting { return }
        }
        Issue.record("no write of the member waited for the test's lock in 20 tries")
    }
}

extension DownloadManager {
    /// What the fleet state says, for a failure's message.
    func fleetDebugDescription() -> String {
        guard let fleet else { return "no fleet" }
        return "free \(fleet.freeSlots), book \(fleet.book.count), ending \(fleet.ending.count), lost \(fleet.lost.count), pending placements \(pendingPlacements.count), owes \(!writes.isEmpty), armed \(writes.armed)"
    }
}
