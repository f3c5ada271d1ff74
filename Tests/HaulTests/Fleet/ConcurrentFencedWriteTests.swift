import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// Several daemons ending their downloads at once, as their managers write them: batches of
/// fenced, releasing completions of members of the same groups, each batch with events for
/// the session's outbox. This is where a fleet of three daemons once stalled: the store
/// failed whole batches with PostgreSQL's "deadlock detected", and every download of such a
/// batch was paused with a store error.
@Suite("Concurrent fenced writes", .timeLimit(.minutes(3)))
struct ConcurrentFencedWriteTests {
    static let daemons = 3
    static let groups = 3
    static let perGroup = 40
    /// Downloads ended per batch, as a manager's group commit gathers them.
    static let batchSize = 4

    /// No batch fails, every download ends completed, and every group completes exactly once
    /// in the whole fleet (one completing transaction, one `groupCompleted` in the outbox).
    @Test func endsOfOneGroupsDownloadsOnThreeDaemonsAllCommit() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 1000))
        var added: [DownloadID] = []
        for group in 0..<Self.groups {
            let first = group * Self.perGroup + 1
            added += try await fixture.add(first...(first + Self.perGroup - 1), group: "g\(group)")
        }
        let session = fixture.session
        var stores: [PostgresStore] = []
        for _ in 0..<Self.daemons { stores.append(try await fixture.daemon()) }
        // Claimed in turns, a few at a time, so that every daemon holds members of every group.
        var held: [[ClaimedDownload]] = Array(repeating: [], count: Self.daemons)
        while true {
            var claimedAny = false
            for (daemon, store) in stores.enumerated() {
                let claimed = try await store.claim(session: session, for: "d\(daemon)", upTo: 5, leaseFor: .seconds(120))
                held[daemon] += claimed
                claimedAny = claimedAny || !claimed.isEmpty
            }
            if !claimedAny { break }
        }
        #expect(held.map(\.count).reduce(0, +) == added.count)

        let fences = try await withThrowingTaskGroup(of: [LeaseFence].self) { tasks in
            for (daemon, store) in stores.enumerated() {
                let mine = held[daemon]
                tasks.addTask {
                    var fences: [LeaseFence] = []
                    var rows: [DownloadID: StoredDownload] = [:]
                    for claimed in mine { rows[claimed.lease.id] = try await store.load(claimed.lease.id) }
                    for start in stride(from: 0, to: mine.count, by: Self.batchSize) {
                        // In the order a manager locks them: by group, then ID.
                        let batch = mine[start..<min(start + Self.batchSize, mine.count)]
                            .sorted { (rows[$0.lease.id]!.group ?? "", $0.lease.id) < (rows[$1.lease.id]!.group ?? "", $1.lease.id) }
                        var writes: [StoreWrite] = []
                        var events: [StoredEvent] = []
                        for claimed in batch {
                            var row = rows[claimed.lease.id]!
                            row.state = .completed
                            let group = row.group!
                            let fence = LeaseFence(
                                lease: claimed.lease, releasing: true,
                                group: LeaseFence.GroupOfLease(session: session, name: group),
                                groupEvent: StoredEvent(kind: .groupCompleted, group: group))
                            fences.append(fence)
                            writes.append(.fenced(fence, [.save([row])]))
                            events.append(StoredEvent(kind: .completed, download: row.id, group: group))
                        }
                        writes.append(.appendEvents(session: session, events))
                        try await store.submit(.all(writes))
                    }
                    return fences
                }
            }
            return try await tasks.reduce(into: [LeaseFence]()) { $0 += $1 }
        }

        #expect(fences.allSatisfy { $0.refused == nil }, "no lease was lost")
        let completedGroups = fences.filter(\.completedGroup).compactMap(\.group?.name).sorted()
        #expect(completedGroups == (0..<Self.groups).map { "g\($0)" }, "each group completed once")
        #expect(try await fixture.sql("SELECT count(*) FROM haul.download WHERE state = 'completed' AND leaseOwner IS NULL") == "\(added.count)")
        #expect(try await fixture.sql("SELECT count(*) FROM haul.event WHERE kind = 'groupCompleted'") == "\(Self.groups)")
    }
}
