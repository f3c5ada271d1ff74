import Testing
@testable import Haul

/// Which finished downloads are forgotten, and in what order, without a manager.
@Suite("Retention queue")
struct RetentionQueueTests {
    func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value) }
    func ids(_ values: ClosedRange<UInt64>) -> [DownloadID] { values.map(id) }

    /// Within the bound nothing is forgotten; beyond it, the oldest first.
    @Test func oldestBeyondTheBoundGoFirst() {
        var queue = RetentionQueue(maxFinished: 3)
        #expect(queue.mayForget(ids(1...3)).isEmpty)
        #expect(queue.mayForget([id(4)]) == [id(1)])
        #expect(queue.mayForget(ids(5...6)) == [id(2), id(3)])
        #expect(queue.count == 3)
    }

    /// A download that runs again is not forgotten; if it finishes again it waits from its
    /// new place, behind those that finished before it.
    @Test func withdrawnAndFinishedAgainWaitsFromItsNewPlace() {
        var queue = RetentionQueue(maxFinished: 2)
        #expect(queue.mayForget(ids(1...2)).isEmpty)
        queue.withdraw(id(1))
        #expect(queue.count == 1)
        #expect(queue.mayForget([id(3)]).isEmpty)
        #expect(queue.mayForget([id(1)]) == [id(2)])
        #expect(queue.mayForget([id(4)]) == [id(3)])
        #expect(queue.mayForget([id(5)]) == [id(1)])
    }

    /// Offered twice, a download is counted once.
    @Test func offeredTwiceCountsOnce() {
        var queue = RetentionQueue(maxFinished: 2)
        #expect(queue.mayForget([id(1), id(1), id(2)]).isEmpty)
        #expect(queue.count == 2)
    }

    /// No bound: nothing is ever forgotten. A bound of zero: everything at once.
    @Test func noBoundAndZeroBound() {
        var unbounded = RetentionQueue(maxFinished: nil)
        #expect(unbounded.mayForget(ids(1...5000)).isEmpty)
        var none = RetentionQueue(maxFinished: 0)
        #expect(none.mayForget(ids(1...3)) == ids(1...3))
        #expect(none.count == 0)
    }

    /// Churn (finish, run again, finish …) over far more downloads than the bound keeps the
    /// order right through the queue's compactions.
    @Test func orderHoldsThroughCompaction() {
        var queue = RetentionQueue(maxFinished: 10)
        var forgotten: [DownloadID] = []
        for n in UInt64(1)...20_000 {
            forgotten += queue.mayForget([id(n)])
            // Every other download runs again before the next finishes, and finishes again.
            if n % 2 == 0 {
                queue.withdraw(id(n))
                forgotten += queue.mayForget([id(n)])
            }
        }
        #expect(queue.count == 10)
        #expect(forgotten.count == 19_990)
        #expect(forgotten == ids(1...19_990))
        #expect(Set(forgotten).count == forgotten.count)
    }
}
