import Testing
@testable import Haul

/// A download waiting for its server gives its slot back (`park`) and, once its retry is due
/// (`markDue`), takes the next free slot before anything that never started.
@Suite struct SchedulerReturningTests {
    private func id(_ n: UInt64) -> DownloadID { DownloadID(rawValue: n) }

    /// Parking frees the slot for the next queued download; the parked one is not started
    /// again before its retry is due, and then not before a slot is free.
    @Test func parkFreesTheSlotUntilDue() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        for n: UInt64 in 1...3 { scheduler.enqueue(id(n), host: "h", priority: 0) }
        #expect(scheduler.admit() == [id(1)])
        scheduler.park(id(1))
        #expect(scheduler.runningCount == 0)
        #expect(scheduler.isReturning(id(1)) && scheduler.isAdmitted(id(1)) && !scheduler.isDue(id(1)))
        #expect(scheduler.admit() == [id(2)])
        #expect(scheduler.admit() == [])
        let marked = scheduler.markDue(id(1))
        #expect(marked && scheduler.isDue(id(1)))
        // Due, but the one slot is taken: it waits for it.
        #expect(scheduler.admit() == [])
        #expect(scheduler.isReturning(id(1)))
        scheduler.finished(id(2))
        // The free slot goes to the due download, not to id 3 which never started.
        #expect(scheduler.admit() == [id(1)])
        #expect(!scheduler.isReturning(id(1)))
        #expect(scheduler.runningCount == 1)
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [id(3)])
    }

    /// A due download goes before queued downloads of any priority; several due take slots in
    /// the order they became due; a parked one not yet due is passed over.
    @Test func dueDownloadsGoFirstInDueOrder() {
        var scheduler = SchedulerState(limits: .init(global: 3, perHost: nil))
        for n: UInt64 in 1...3 { scheduler.enqueue(id(n), host: "h", priority: 0) }
        #expect(scheduler.admit() == [id(1), id(2), id(3)])
        for n: UInt64 in 1...3 { scheduler.park(id(n)) }
        scheduler.enqueue(id(10), host: "h", priority: 100)
        scheduler.enqueue(id(11), host: "h", priority: 0)
        scheduler.enqueue(id(12), host: "h", priority: 0)
        #expect(scheduler.admit() == [id(10), id(11), id(12)])
        #expect(scheduler.returningOrder() == [id(1), id(2), id(3)])
        scheduler.markDue(id(3))
        scheduler.markDue(id(1))
        #expect(scheduler.returningOrder() == [id(3), id(1), id(2)])
        scheduler.enqueue(id(13), host: "h", priority: 1_000)
        scheduler.finished(id(10))
        scheduler.finished(id(11))
        #expect(scheduler.admit() == [id(3), id(1)])
        scheduler.finished(id(12))
        #expect(scheduler.admit() == [id(13)])
        #expect(scheduler.waitingOrder().isEmpty)
        #expect(scheduler.returningOrder() == [id(2)])
    }

    /// A due download obeys its host's limit, and one blocked by it does not hold back a due
    /// download of another host behind it.
    @Test func dueDownloadsObeyTheHostLimit() {
        var scheduler = SchedulerState(limits: .init(global: 2, perHost: 1))
        scheduler.enqueue(id(1), host: "dead", priority: 0)
        scheduler.enqueue(id(2), host: "other", priority: 0)
        #expect(scheduler.admit() == [id(1), id(2)])
        scheduler.park(id(1))
        scheduler.park(id(2))
        scheduler.enqueue(id(3), host: "dead", priority: 0)
        #expect(scheduler.admit() == [id(3)])
        scheduler.markDue(id(1))
        scheduler.markDue(id(2))
        // id 1's host is busy with id 3: id 2 takes the free slot.
        #expect(scheduler.admit() == [id(2)])
        #expect(scheduler.isDue(id(1)))
        scheduler.finished(id(3))
        #expect(scheduler.admit() == [id(1)])
    }

    /// Paused or canceled while waiting (due or not): `finished` forgets it, it never starts,
    /// and it takes no slot; marking it due afterwards does nothing.
    @Test func finishedWhileWaitingIsForgotten() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        scheduler.enqueue(id(1), host: "h", priority: 0)
        scheduler.enqueue(id(2), host: "h", priority: 0)
        #expect(scheduler.admit() == [id(1)])
        scheduler.park(id(1))
        #expect(scheduler.admit() == [id(2)])
        scheduler.markDue(id(1))
        scheduler.finished(id(1))
        #expect(!scheduler.isAdmitted(id(1)) && !scheduler.isReturning(id(1)))
        let markedAgain = scheduler.markDue(id(1))
        #expect(!markedAgain)
        scheduler.finished(id(2))
        #expect(scheduler.admit() == [])
        #expect(scheduler.returningOrder() == [])
        // Queued again later (resumed), it starts from the queue as any other.
        scheduler.enqueue(id(1), host: "h", priority: 0)
        #expect(scheduler.admit() == [id(1)])
    }

    /// A parked member still holds its sequential group current: the next group does not
    /// start while it waits for its server; it does once the member has finished.
    @Test func parkedMemberKeepsItsGroupCurrent() {
        var scheduler = SchedulerState(limits: .init(global: 2, perHost: nil, sequentialGroups: true))
        scheduler.enqueue(id(1), host: "h", priority: 0, group: 0)
        scheduler.enqueue(id(2), host: "h", priority: 0, group: 1)
        #expect(scheduler.admit() == [id(1)])
        scheduler.park(id(1))
        #expect(scheduler.admit() == [])
        scheduler.markDue(id(1))
        #expect(scheduler.admit() == [id(1)])
        scheduler.finished(id(1))
        #expect(scheduler.admit() == [id(2)])
    }

    /// The queue's start order (a copy admitting everything) lists due downloads first.
    @Test func startOrderListsDueDownloadsFirst() {
        var scheduler = SchedulerState(limits: .init(global: 1, perHost: nil))
        scheduler.enqueue(id(1), host: "h", priority: 0)
        scheduler.enqueue(id(2), host: "h", priority: 5)
        #expect(scheduler.admit() == [id(2)])
        scheduler.park(id(2))
        #expect(scheduler.admit() == [id(1)])
        scheduler.enqueue(id(3), host: "h", priority: 9)
        scheduler.markDue(id(2))
        var copy = scheduler
        copy.limits = SchedulerState.Limits(global: .max, perHost: nil)
        #expect(copy.admit() == [id(2), id(3)])
    }

    /// The due FIFO stays bounded by the downloads waiting, not by how often they were paused:
    /// with one due download blocked at its front by its host's limit, a thousand others made
    /// due and removed (paused) leave at most a few stale entries behind.
    @Test func dueQueueStaysBounded() {
        var queue = ReturningQueue()
        queue.park(id(1), host: "busy")
        queue.markDue(id(1))
        for n: UInt64 in 2...1_001 {
            queue.park(id(n), host: "other")
            queue.markDue(id(n))
            queue.remove(id(n))
        }
        #expect(queue.dueBufferCount <= 18)
        #expect(queue.dueCount == 1 && queue.count == 1)
        #expect(queue.takeFirstDue(where: { $0 != "busy" }) == nil)
        let taken = queue.takeFirstDue(where: { _ in true })
        #expect(taken?.id == id(1) && taken?.host == "busy")
        #expect(queue.count == 0 && queue.dueCount == 0)
    }
}
