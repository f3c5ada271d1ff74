/// How a download moves within the waiting queue, in the scheduler's terms, without I/O.
///
/// The scheduler orders by priority, then by enqueue order within a priority, so a move is
/// expressed as a priority for the moved download and a list of downloads to queue again, in
/// order, at the back of that priority's lane: the download takes the priority of its new
/// predecessor (at the front: one more than its successor's), and the downloads of that
/// priority behind it are queued again after it. Nothing else changes place.
struct QueueMove: Sendable, Hashable {
    /// The index the download has after the move (the requested one, clamped to the queue).
    let index: Int
    /// The priority the moved download takes.
    let priority: Int
    /// Downloads to take out and queue again at the back of `priority`'s lane, in this
    /// order; empty when the download is already at `index`.
    let requeue: [DownloadID]

    init(index: Int, priority: Int, requeue: [DownloadID]) {
        self.index = index
        self.priority = priority
        self.requeue = requeue
    }

    /// Plans moving `id` to `index` of `queue` (the queue's one order, higher priority first);
    /// nil when `id` is not in `queue`.
    init?(moving id: DownloadID, in queue: [DownloadID], to index: Int, priorityOf: (DownloadID) -> Int) {
        guard let from = queue.firstIndex(of: id) else { return nil }
        let target = min(max(0, index), queue.count - 1)
        guard target != from else {
            self.index = target
            self.priority = priorityOf(id)
            self.requeue = []
            return
        }
        var moved = queue
        moved.remove(at: from)
        moved.insert(id, at: target)
        let priority = target == 0 ? priorityOf(moved[1]) + 1 : priorityOf(moved[target - 1])
        var requeue = [id]
        for other in moved[(target + 1)...] {
            guard priorityOf(other) == priority else { break }
            requeue.append(other)
        }
        self.index = target
        self.priority = priority
        self.requeue = requeue
    }
}
