import Testing
@testable import Haul

@Suite("Queue moves")
struct QueueMoveTests {
    func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value) }

    /// Moving behind a download takes its priority, and those behind the new place in that
    /// priority are queued again after the moved one.
    @Test func moveTakesThePredecessorsPriority() {
        let priorities: [DownloadID: Int] = [id(1): 5, id(2): 5, id(3): 0, id(4): 0]
        let move = QueueMove(moving: id(4), in: [id(1), id(2), id(3), id(4)], to: 1) { priorities[$0] ?? 0 }
        #expect(move == QueueMove(index: 1, priority: 5, requeue: [id(4), id(2)]))
    }

    /// Moving to the front takes one more than the new successor's priority, with nothing
    /// queued again but the moved download.
    @Test func moveToTheFront() {
        let move = QueueMove(moving: id(3), in: [id(1), id(2), id(3)], to: 0) { _ in 0 }
        #expect(move == QueueMove(index: 0, priority: 1, requeue: [id(3)]))
    }

    /// Indices are clamped to the queue; a download already there is not moved; one not in
    /// the queue has no move.
    @Test func clampedUnchangedAndMissing() {
        let queue = [id(1), id(2), id(3)]
        #expect(QueueMove(moving: id(1), in: queue, to: 99) { _ in 0 } == QueueMove(index: 2, priority: 0, requeue: [id(1)]))
        #expect(QueueMove(moving: id(2), in: queue, to: 1) { _ in 0 } == QueueMove(index: 1, priority: 0, requeue: []))
        #expect(QueueMove(moving: id(3), in: queue, to: -4) { _ in 0 }?.index == 0)
        #expect(QueueMove(moving: id(9), in: queue, to: 0) { _ in 0 } == nil)
    }
}
