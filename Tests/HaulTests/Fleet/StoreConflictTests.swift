import Foundation
@testable import Haul
import HaulTestSupport
import PostgresNIO
import Testing

/// Transactions of the PostgreSQL store that the server rolls back to break a deadlock run
/// again: two daemons (or a daemon's batch and its own lease renewal) that lock the same rows
/// in different orders both commit, where one of them used to fail (and the files placed
/// with a failed batch ended paused).
@Suite("PostgreSQL store: conflicting transactions", .timeLimit(.minutes(3)))
struct StoreConflictTests {
    /// Lets both transactions take their first lock before either asks for its second, on
    /// their first attempt; later attempts pass.
    private actor Meeting {
        private var arrived = 0
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func arrive() async {
            arrived += 1
            guard arrived < 2 else {
                for continuation in waiting { continuation.resume() }
                waiting = []
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }
    }

    /// Each of two stores updates rows a and b in the opposite order, meeting in between: the
    /// server finds the deadlock and aborts one; it runs again and commits. Both rows end with
    /// both increments.
    @Test func aTransactionAbortedByADeadlockRunsAgainAndCommits() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let added = try await fixture.add(1...2).map { Int64(bitPattern: $0.rawValue) }
        let counts = "SELECT attempts FROM haul.download ORDER BY id"
        let before = try await fixture.sql(counts).split(separator: "\n").compactMap { Int($0) }
        #expect(before.count == 2)
        let (one, other) = (try await fixture.daemon(), try await fixture.daemon())
        let meeting = Meeting()
        func update(_ store: PostgresStore, _ first: Int64, then second: Int64) async throws(HaulError) {
            try await store.write("update two rows") { connection in
                try await connection.run("UPDATE haul.download SET attempts = attempts + 1 WHERE id = \(first)")
                await meeting.arrive()
                try await connection.run("UPDATE haul.download SET attempts = attempts + 1 WHERE id = \(second)")
            }
        }
        async let forward: Void = update(one, added[0], then: added[1])
        async let backward: Void = update(other, added[1], then: added[0])
        try await forward
        try await backward
        let after = try await fixture.sql(counts).split(separator: "\n").compactMap { Int($0) }
        #expect(after == before.map { $0 + 2 })
    }

    /// What a rolled-back attempt recorded on a fence (refused, or its group completed) is
    /// forgotten when the transaction begins again; nested fences are found.
    @Test func aFenceForgetsWhatARolledBackAttemptRecorded() {
        let lease = DownloadLease(id: DownloadID(rawValue: 1), owner: "d1", epoch: 1)
        let outer = LeaseFence(lease: lease, releasing: true)
        let inner = LeaseFence(lease: lease, releasing: false)
        outer.refuse(LeaseFence.Refusal(owner: "d2", epoch: 2))
        inner.groupCompleted()
        let fences = StoreWrite.fences(in: [.all([.fenced(outer, [.fenced(inner, [])])]), .delete([])])
        #expect(fences.count == 2)
        for fence in fences { fence.attemptStarted() }
        #expect(outer.refused == nil && !inner.completedGroup)
    }
}
