import Testing
@testable import Haul

@Suite("Scheduler")
struct SchedulerStateTests {
    func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value) }

    /// The global limit bounds running downloads, and FIFO order holds within a priority.
    @Test func globalLimitAndFIFO() {
        var scheduler = SchedulerState(limits: .init(global: 2, perHost: nil))
        for n in 1...5 { scheduler.enqueue(id(UInt64(n)), host: "a", priority: 0) }
        #expect(scheduler.admit() == [id(1), id(2)])
        #expect(scheduler.admit() == [])
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [id(3)])
        #expect(scheduler.runningCount == 2)
        #expect(scheduler.queuedCount == 2)
    }

    /// Higher priorities start first, whatever order they were added in.
    @Test func priorities() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        scheduler.enqueue(id(1), host: "a", priority: 0)
        scheduler.enqueue(id(2), host: "a", priority: 5)
        scheduler.enqueue(id(3), host: "a", priority: -1)
        scheduler.enqueue(id(4), host: "a", priority: 5)
        var order: [DownloadID] = []
        for _ in 0..<4 {
            let started = scheduler.admit()
            order += started
            for s in started { scheduler.finished(s) }
        }
        #expect(order == [id(2), id(4), id(1), id(3)])
    }

    /// A host at its limit does not block downloads from other hosts queued behind it.
    @Test func perHostLimitDoesNotBlockOtherHosts() {
        var scheduler = SchedulerState(limits: .init(global: 3, perHost: 1))
        scheduler.enqueue(id(1), host: "a", priority: 0)
        scheduler.enqueue(id(2), host: "a", priority: 0)
        scheduler.enqueue(id(3), host: "b", priority: 0)
        #expect(scheduler.admit() == [id(1), id(3)])
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [id(2)])
    }

    /// A dequeued download is skipped, and re-enqueuing it puts it at the back.
    @Test func dequeueAndRequeue() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        scheduler.enqueue(id(1), host: "a", priority: 0)
        scheduler.enqueue(id(2), host: "a", priority: 0)
        scheduler.dequeue(id(1))
        scheduler.enqueue(id(1), host: "a", priority: 0)
        #expect(scheduler.admit() == [id(2)])
        scheduler.finished(id(2))
        #expect(scheduler.admit() == [id(1)])
        #expect(scheduler.queuedCount == 0)
    }

    /// There is no hidden cap: a limit of 64 runs 64 downloads against one host.
    @Test func noHiddenCap() {
        var scheduler = SchedulerState(limits: .init(global: 64, perHost: nil))
        for n in 1...100 { scheduler.enqueue(id(UInt64(n)), host: "same", priority: 0) }
        #expect(scheduler.admit().count == 64)
    }
}

/// Sequential group order: group A finishes before group B starts.
@Suite struct SequentialGroupSchedulingTests {
    private func id(_ n: UInt64) -> DownloadID { DownloadID(rawValue: n) }

    /// No download of a later group starts while one of an earlier group is queued or
    /// running, even with free slots; downloads without a group are never held back.
    @Test func laterGroupWaits() {
        var scheduler = SchedulerState(limits: .init(global: 4, perHost: nil, sequentialGroups: true))
        for n: UInt64 in 1...3 { scheduler.enqueue(id(n), host: "h", priority: 0, group: 0) }
        for n: UInt64 in 4...6 { scheduler.enqueue(id(n), host: "h", priority: 0, group: 1) }
        scheduler.enqueue(id(7), host: "h", priority: 0, group: nil)
        #expect(scheduler.admit() == [id(1), id(2), id(3), id(7)])
        scheduler.finished(id(1))
        scheduler.finished(id(2))
        #expect(scheduler.admit().isEmpty)
        scheduler.finished(id(3))
        #expect(scheduler.admit() == [id(4), id(5), id(6)])
    }

    /// A download of the earlier group taken out of the queue (paused) no longer holds back
    /// the next group.
    @Test func dequeuedMemberReleasesTheGroup() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil, sequentialGroups: true))
        scheduler.enqueue(id(1), host: "h", priority: 0, group: 0)
        scheduler.enqueue(id(2), host: "h", priority: 0, group: 0)
        scheduler.enqueue(id(3), host: "h", priority: 0, group: 1)
        #expect(scheduler.admit() == [id(1)])
        scheduler.dequeue(id(2))
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [id(3)])
    }

    /// Without sequential order, groups interleave in enqueue order.
    @Test func interleavedByDefault() {
        var scheduler = SchedulerState(limits: .init(global: 2, perHost: nil))
        scheduler.enqueue(id(1), host: "h", priority: 0, group: 0)
        scheduler.enqueue(id(2), host: "h", priority: 0, group: 1)
        #expect(scheduler.admit() == [id(1), id(2)])
    }

    /// A download whose bytes are all here hands its slot over: the next one starts while it
    /// finishes, and finishing it later frees nothing twice.
    @Test func handOverFreesTheSlotOnce() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: 1))
        for n in 1...3 { scheduler.enqueue(id(UInt64(n)), host: "a", priority: 0) }
        #expect(scheduler.admit() == [id(1)])
        scheduler.handOver(id(1))
        #expect(scheduler.isAdmitted(id(1)))
        #expect(scheduler.runningCount == 0)
        #expect(scheduler.admit() == [id(2)])
        scheduler.finished(id(1))
        #expect(!scheduler.isAdmitted(id(1)))
        #expect(scheduler.admit() == [])
        #expect(scheduler.runningCount == 1)
        scheduler.finished(id(2))
        #expect(scheduler.admit() == [id(3)])
    }

    /// A handed-over download that must fetch again takes its slot back, above the limit if
    /// need be, and the limit holds again once the extra download finishes.
    @Test func reclaimAfterHandOver() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        for n in 1...3 { scheduler.enqueue(id(UInt64(n)), host: "a", priority: 0) }
        #expect(scheduler.admit() == [id(1)])
        scheduler.handOver(id(1))
        #expect(scheduler.admit() == [id(2)])
        scheduler.reclaim(id(1), host: "a")
        #expect(scheduler.runningCount == 2)
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [])
        scheduler.finished(id(2))
        #expect(scheduler.admit() == [id(3)])
        // Reclaiming a download that never handed over changes nothing.
        scheduler.reclaim(id(3), host: "a")
        #expect(scheduler.runningCount == 1)
    }

    /// A handed-over member still holds its sequential group open: the next group waits
    /// until it has finished.
    @Test func handedOverMemberKeepsItsGroupCurrent() {
        var scheduler = SchedulerState(limits: .init(global: 2, perHost: nil, sequentialGroups: true))
        scheduler.enqueue(id(1), host: "h", priority: 0, group: 0)
        scheduler.enqueue(id(2), host: "h", priority: 0, group: 1)
        #expect(scheduler.admit() == [id(1)])
        scheduler.handOver(id(1))
        #expect(scheduler.admit() == [])
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [id(2)])
    }

    /// A held (paused) download keeps its place: it is passed over while held, listed in the
    /// waiting order among the others, and starts from that place once released.
    @Test func heldDownloadsKeepTheirPlace() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        for n in 1...4 { scheduler.enqueue(id(UInt64(n)), host: "a", priority: 0) }
        scheduler.hold(id(1))
        scheduler.hold(id(3))
        #expect(scheduler.isHeld(id(1)) && !scheduler.isQueued(id(1)) && scheduler.hasPlace(id(1)))
        #expect(scheduler.queuedCount == 2)
        #expect(scheduler.waitingOrder() == [id(1), id(2), id(3), id(4)])
        #expect(scheduler.admit() == [id(2)])
        #expect(scheduler.waitingOrder() == [id(1), id(3), id(4)])
        scheduler.release(id(3))
        scheduler.finished(id(2))
        #expect(scheduler.admit() == [id(3)])
        scheduler.finished(id(3))
        #expect(scheduler.admit() == [id(4)])
        scheduler.finished(id(4))
        #expect(scheduler.admit() == [])
        #expect(scheduler.waitingOrder() == [id(1)])
        let released = scheduler.release(id(1))
        let releasedTwice = scheduler.release(id(1))
        #expect(released && !releasedTwice)
        #expect(scheduler.admit() == [id(1)])
    }

    /// A download enqueued held (added paused, or paused out of a slot at the front) is never
    /// started until released, and a dequeued held download leaves no place behind.
    @Test func enqueuedHeldAtTheFront() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        scheduler.enqueue(id(1), host: "a", priority: 0)
        scheduler.enqueue(id(2), host: "a", priority: 0, held: true)
        scheduler.enqueue(id(3), host: "a", priority: 0, held: true, atFront: true)
        #expect(scheduler.waitingOrder() == [id(3), id(1), id(2)])
        #expect(scheduler.admit() == [id(1)])
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [])
        scheduler.dequeue(id(3))
        #expect(scheduler.waitingOrder() == [id(2)])
        #expect(!scheduler.hasPlace(id(3)))
        scheduler.enqueue(id(4), host: "a", priority: 0, atFront: true)
        #expect(scheduler.waitingOrder() == [id(4), id(2)])
        #expect(scheduler.admit() == [id(4)])
    }

    /// Many held downloads at the front of a lane do not stop a queued one behind them, and
    /// one released later in the lane still starts before those queued after it.
    @Test func heldRunAtTheFrontIsPassedOver() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        for n in 1...1_000 { scheduler.enqueue(id(UInt64(n)), host: "a", priority: 0, held: true) }
        scheduler.enqueue(id(2_000), host: "a", priority: 0)
        scheduler.enqueue(id(2_001), host: "a", priority: 0)
        #expect(scheduler.admit() == [id(2_000)])
        scheduler.finished(id(2_000))
        scheduler.release(id(500))
        #expect(scheduler.admit() == [id(500)])
        scheduler.finished(id(500))
        #expect(scheduler.admit() == [id(2_001)])
        #expect(scheduler.waitingOrder().count == 999)
    }

    /// Sequential groups: a held download does not keep its group open, and counts again for
    /// it once released.
    @Test func heldDownloadsLeaveTheirSequentialGroup() {
        var scheduler = SchedulerState(limits: .init(global: 2, perHost: nil, sequentialGroups: true))
        scheduler.enqueue(id(1), host: "a", priority: 0, group: 1)
        scheduler.enqueue(id(2), host: "a", priority: 0, group: 2)
        scheduler.hold(id(1))
        #expect(scheduler.admit() == [id(2)])
        scheduler.release(id(1))
        #expect(scheduler.admit() == [id(1)])
    }
}
