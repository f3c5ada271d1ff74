import Foundation
import Testing
@testable import Haul

/// The store-write queue's batching rules, without a store.
@Suite("Store write queue")
struct StoreWriteQueueTests {
    func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value) }
    func placement(_ value: UInt64) -> StoredPlacement {
        StoredPlacement(id: id(value), intent: PlacementIntent(
            directory: "/d", name: "f\(value)", policy: .rename, device: 1, inode: value, length: 10))
    }
    func queue() -> StoreWriteQueue { StoreWriteQueue(flushInterval: .milliseconds(50), placementWindow: .milliseconds(5)) }

    /// The first change arms the flush timer; later ones join the write it will start.
    @Test func firstChangeArmsTheFlushTimerOnce() {
        var writes = queue()
        #expect(writes.changed(id(1), .state) == .armTimer(.flush, after: .milliseconds(50)))
        #expect(writes.changed(id(2), .wholeRow) == .none)
        #expect(writes.changed(id(1), .segments) == .none)
        writes.timerFired(.flush)
        let batch = writes.takeBatch()
        #expect(batch.progress == [id(1), id(2)])
        #expect(batch.wholeRows == [id(2)])
        #expect(batch.segments == [id(1)])
        #expect(writes.isEmpty)
        // After the write, the next change arms the timer again.
        #expect(writes.changed(id(3), .state) == .armTimer(.flush, after: .milliseconds(50)))
    }

    /// `note` owes a change without arming anything: its caller writes at once.
    @Test func noteArmsNothing() {
        var writes = queue()
        writes.note(id(1), .segments)
        #expect(writes.owes(id(1)))
        #expect(writes.armed.isEmpty)
        #expect(writes.takeBatch().segments == [id(1)])
    }

    /// A placement waits the short window while others fetch, not at all alone, and has its
    /// own timer even while the flush timer is armed.
    @Test func placementsHaveTheirOwnShortTimer() {
        var writes = queue()
        #expect(writes.placementRecorded(placement(1), othersFetching: false) == .armTimer(.placement, after: .zero))
        writes.timerFired(.placement)
        _ = writes.takeBatch()
        #expect(writes.changed(id(9), .state) == .armTimer(.flush, after: .milliseconds(50)))
        #expect(writes.placementRecorded(placement(2), othersFetching: true) == .armTimer(.placement, after: .milliseconds(5)))
        #expect(writes.placementRecorded(placement(3), othersFetching: true) == .none)
        writes.timerFired(.placement)
        let batch = writes.takeBatch()
        #expect(batch.placements.map(\.id) == [id(2), id(3)])
        #expect(batch.progress == [id(9)])
    }

    /// A row written whole carries its intent: the intent is not written a second time.
    @Test func wholeRowCarriesItsPlacement() {
        var writes = queue()
        _ = writes.placementRecorded(placement(1), othersFetching: false)
        _ = writes.placementRecorded(placement(2), othersFetching: false)
        _ = writes.changed(id(1), .wholeRow)
        #expect(writes.takeBatch().placements.map(\.id) == [id(2)])
    }

    /// A forgotten download's changes are dropped and its row is deleted; an emptied group goes
    /// after it.
    @Test func forgottenDownloadsAreDeletedNotWritten() {
        var writes = queue()
        _ = writes.changed(id(1), .wholeRow)
        _ = writes.placementRecorded(placement(1), othersFetching: false)
        _ = writes.changed(id(2), .state)
        writes.forgotten(id(1))
        writes.groupForgotten("g")
        let batch = writes.takeBatch()
        #expect(batch.progress == [id(2)])
        #expect(batch.wholeRows.isEmpty)
        #expect(batch.placements.isEmpty)
        #expect(batch.deletions == [id(1)])
        #expect(batch.deletedGroups == ["g"])
    }

    /// A failed batch is owed again whole, ahead of what came since; nothing is dropped.
    @Test func failedBatchIsOwedAgain() {
        var writes = queue()
        _ = writes.changed(id(1), .segments)
        _ = writes.placementRecorded(placement(2), othersFetching: false)
        writes.forgotten(id(3))
        let failed = writes.takeBatch()
        #expect(writes.isEmpty)
        _ = writes.placementRecorded(placement(4), othersFetching: false)
        _ = writes.batchFailed(failed)
        #expect(writes.owes(id(1)))
        let retry = writes.takeBatch()
        #expect(retry.segments == [id(1)])
        #expect(retry.placements.map(\.id) == [id(2), id(4)])
        #expect(retry.deletions == [id(3)])
    }

    /// A completion written with its intent goes even with a row written whole (after it, in
    /// the same transaction), and is dropped when its file was not placed.
    @Test func completionIsWrittenAfterAWholeRowAndDroppedWhenNotPlaced() {
        var writes = queue()
        var completed = placement(1)
        completed.completion = StoredDownload(
            id: id(1), session: "s", group: nil, position: 1, kept: KeptRequest(DownloadRequest(
                url: URL(string: "http://h/f1")!, directory: URL(fileURLWithPath: "/d"))),
            partKey: "0000000000000001", state: .completed, finalURL: nil, validator: nil, expectedLength: 10,
            durableOffset: 10, placement: completed.intent, filePath: "/d/f1", fileSize: 10, fileModified: nil,
            skipped: false, verifiedChecksums: [], error: nil, attempts: 1, createdAt: Date(), updatedAt: Date())
        _ = writes.placementRecorded(completed, othersFetching: false)
        _ = writes.changed(id(1), .wholeRow)
        #expect(writes.takeBatch().placements.map(\.id) == [id(1)])
        _ = writes.placementRecorded(completed, othersFetching: false)
        _ = writes.placementRecorded(placement(2), othersFetching: false)
        writes.dropCompletion(of: id(1))
        #expect(writes.takeBatch().placements.map(\.id) == [id(2)])
    }

    /// A move to another group writes the group column alone, unless the row is written whole.
    @Test func groupMovesAreNarrowUnlessTheRowIsWrittenWhole() {
        var writes = queue()
        #expect(writes.changed(id(1), .group) == .armTimer(.flush, after: .milliseconds(50)))
        _ = writes.changed(id(2), .group)
        _ = writes.changed(id(2), .wholeRow)
        #expect(writes.owes(id(1)))
        let batch = writes.takeBatch()
        #expect(batch.groupMoves == [id(1)])
        #expect(batch.progress == [id(2)])
        #expect(writes.isEmpty)
        _ = writes.batchFailed(batch)
        #expect(writes.owes(id(1)))
    }

    /// A failed write is tried again by itself, whether or not anything else changes: after
    /// the batching delay, then after delays that double up to five seconds, and soon again
    /// once a write went through. Deferred placements wait as long.
    @Test func failedWritesAreTriedAgainWithGrowingDelays() {
        var writes = queue()
        _ = writes.changed(id(1), .state)
        writes.timerFired(.flush)
        var delays: [Duration] = []
        for _ in 0..<9 {
            let batch = writes.takeBatch()
            guard case .armTimer(.flush, let delay) = writes.batchFailed(batch) else {
                Issue.record("a failed write armed no retry")
                return
            }
            delays.append(delay)
            #expect(writes.placementsDeferred() == .armTimer(.placement, after: delay))
            writes.timerFired(.placement)
            writes.timerFired(.flush)
        }
        #expect(delays.map { $0 / .milliseconds(1) } == [50, 100, 200, 400, 800, 1600, 3200, 5000, 5000])
        #expect(writes.owes(id(1)))
        _ = writes.changed(id(2), .state)
        #expect(writes.batchFailed(writes.takeBatch()) == .none, "the flush timer armed by the change carries it")
        writes.batchWritten()
        writes.timerFired(.flush)
        #expect(writes.batchFailed(writes.takeBatch()) == .armTimer(.flush, after: .milliseconds(50)))
    }

    /// What is owed already (events, a failed batch) arms the flush timer on request.
    @Test func flushOwedArmsOnce() {
        var writes = queue()
        #expect(writes.flushOwed() == .armTimer(.flush, after: .milliseconds(50)))
        #expect(writes.flushOwed() == .none)
        writes.timerFired(.flush)
        #expect(writes.flushOwed() == .armTimer(.flush, after: .milliseconds(50)))
    }
}
