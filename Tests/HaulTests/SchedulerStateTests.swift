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
