import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// A client of any daemon sees the downloads other daemons of the fleet hold: rows read from
/// the store, as their owner last wrote them.
@Suite("Fleet views", .timeLimit(.minutes(2)))
struct FleetViewTests {
    /// Downloads written by another daemon show on a manager that does not hold them: the
    /// unfinished ones in its listings (queue order, only the states asked for), any of them
    /// by ID with the state, total and durable offset their owner checkpointed; a download of
    /// another session does not.
    @Test func downloadsAnotherDaemonHoldsAreReadFromTheStore() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let b = try await fixture.daemon()
        let onB = fixture.manager(on: b)
        try await Support.shuttingDown([onB]) {
            #expect(await onB.downloadsElsewhere(inStates: [.queued, .running, .paused]).isEmpty)

            let ids = try await fixture.add(1...4)
            let key = { (n: Int) in String(Int64(bitPattern: ids[n].rawValue)) }
            _ = try await fixture.sql("UPDATE haul.download SET state = 'running', durableOffset = 500, expectedLength = 1000 WHERE id = \(key(1))")
            _ = try await fixture.sql("UPDATE haul.download SET state = 'completed', durableOffset = 2000, expectedLength = 2000 WHERE id = \(key(3))")
            var other = StoreTests.minimal(9, session: "another session")
            other.state = .queued
            try await fixture.store.save([other])

            let unfinished = await onB.downloadsElsewhere(inStates: [.queued, .running, .paused])
            #expect(unfinished.map(\.id) == [ids[0], ids[1], ids[2]])
            #expect(await onB.downloadsElsewhere(inStates: [.running]).map(\.id) == [ids[1]])
            #expect(await onB.downloadsElsewhere(inStates: [.completed]).isEmpty, "finished history is never scanned")

            let running = try #require(await onB.snapshotInFleet(ids[1]))
            #expect(running.state == .running)
            #expect(running.progress.completedBytes == 500 && running.progress.expectedBytes == 1000)
            let completed = try #require(await onB.snapshotInFleet(ids[3]))
            #expect(completed.state == .completed && completed.progress.completedBytes == 2000)
            #expect(await onB.snapshotInFleet(other.id) == nil, "another session's download is not this one's")
        }
    }

    /// A wait for a group whose members other daemons run looks at the store's counts of its
    /// members: it answers once they say that enough have finished, with the members as the
    /// store has them, and not before (its time limit then ends it).
    @Test func aWaitForAGroupAnswersFromTheStoresCounts() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let b = try await fixture.daemon()
        let onB = fixture.manager(on: b)
        try await Support.shuttingDown([onB]) {
            let ids = try await fixture.add(1...3, group: "g")
            let key = { (n: Int) in String(Int64(bitPattern: ids[n].rawValue)) }
            var counts = try await b.memberCounts(session: fixture.session, group: "g")
            #expect(counts.members == 3 && counts.finished == 0)
            #expect(try await b.memberCounts(session: "another session", group: "g") == (0, 0))

            let none = try await onB.waitForMembersInFleet(ofGroup: "g", knownFinished: 0, timeout: .milliseconds(300))
            #expect(none.map(\.id) == ids && none.allSatisfy { $0.state == .queued })

            _ = try await fixture.sql("UPDATE haul.download SET state = 'completed', durableOffset = 10, expectedLength = 10 WHERE id = \(key(0))")
            _ = try await fixture.sql("UPDATE haul.download SET state = 'failed' WHERE id = \(key(2))")
            counts = try await b.memberCounts(session: fixture.session, group: "g")
            #expect(counts.members == 3 && counts.finished == 2)
            let two = try await onB.waitForMembersInFleet(ofGroup: "g", knownFinished: 1, timeout: .seconds(60))
            #expect(two.map(\.state) == [.completed, .queued, .failed])

            let notAll = try await onB.waitForMembersInFleet(ofGroup: "g", knownFinished: -1, timeout: .milliseconds(300))
            #expect(notAll.filter(\.state.isTerminal).count == 2)
            _ = try await fixture.sql("UPDATE haul.download SET state = 'canceled' WHERE id = \(key(1))")
            let all = try await onB.waitForMembersInFleet(ofGroup: "g", knownFinished: -1, timeout: .seconds(60))
            #expect(all.map(\.state) == [.completed, .canceled, .failed])
        }
    }

    /// On SQLite nothing else writes the store: nothing is read beyond the manager's memory.
    @Test func sqliteManagersReadOnlyTheirMemory() async throws {
        let manager = DownloadManager()
        #expect(await manager.downloadsElsewhere(inStates: [.queued]).isEmpty)
        #expect(await manager.snapshotInFleet(DownloadID(rawValue: 42)) == nil)
        await manager.close()
    }
}
