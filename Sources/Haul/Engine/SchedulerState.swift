import NIOCore

/// Decides which queued downloads start, as a value type without I/O.
///
/// It counts running downloads (not connections): globally, per host, with no hidden cap
/// beyond the limits it is given. Higher priority first; first in, first out within a
/// priority. A download blocked by its host's limit does not block others behind it.
///
/// Removal from the middle of the queue (pause, cancel) is lazy: the entry stays in its lane
/// and is skipped when reached, which keeps every operation O(1) amortised even with
/// 100,000 queued downloads.
struct SchedulerState: Sendable {
    struct Limits: Sendable, Hashable {
        /// Downloads running at once, across all hosts.
        var global: Int
        /// Downloads running at once against one host; nil means only the global limit applies.
        var perHost: Int?
    }

    private struct Entry: Sendable {
        let id: DownloadID
        let host: String
        /// Distinguishes a re-queued entry from its stale, lazily removed predecessor.
        let ticket: UInt64
    }

    var limits: Limits
    /// Priority → FIFO lane.
    private var lanes: [Int: CircularBuffer<Entry>] = [:]
    /// Lane priorities, highest first.
    private var priorities: [Int] = []
    /// The live ticket of every queued download.
    private var queued: [DownloadID: UInt64] = [:]
    private var nextTicket: UInt64 = 0
    private(set) var runningHosts: [DownloadID: String] = [:]
    private var runningPerHost: [String: Int] = [:]

    init(limits: Limits) {
        precondition(limits.global >= 1, "the global limit must be at least 1")
        self.limits = limits
    }

    var queuedCount: Int { queued.count }
    var runningCount: Int { runningHosts.count }
    func isQueued(_ id: DownloadID) -> Bool { queued[id] != nil }

    /// Adds a download to the back of its priority's lane.
    mutating func enqueue(_ id: DownloadID, host: String, priority: Int) {
        precondition(queued[id] == nil && runningHosts[id] == nil, "\(id) is already scheduled")
        nextTicket += 1
        queued[id] = nextTicket
        if lanes[priority] == nil {
            lanes[priority] = CircularBuffer(initialCapacity: 16)
            priorities.append(priority)
            priorities.sort(by: >)
        }
        lanes[priority]!.append(Entry(id: id, host: host, ticket: nextTicket))
    }

    /// Takes a queued download out of the queue (paused or canceled while waiting).
    mutating func dequeue(_ id: DownloadID) {
        queued[id] = nil
    }

    /// A running download gave its slot back.
    mutating func finished(_ id: DownloadID) {
        guard let host = runningHosts.removeValue(forKey: id) else {
            preconditionFailure("\(id) finished but was not running")
        }
        runningPerHost[host, default: 1] -= 1
        if runningPerHost[host] == 0 { runningPerHost[host] = nil }
    }

    /// Picks the downloads to start now and marks them running.
    mutating func admit() -> [DownloadID] {
        var started: [DownloadID] = []
        var laneIndex = 0
        while runningHosts.count < limits.global, laneIndex < priorities.count {
            let priority = priorities[laneIndex]
            if let id = admitFromLane(priority) {
                started.append(id)
            } else {
                laneIndex += 1
            }
        }
        dropEmptyLanes()
        return started
    }

    /// Admits the first eligible entry of a lane, discarding stale entries on the way.
    private mutating func admitFromLane(_ priority: Int) -> DownloadID? {
        guard var lane = lanes.removeValue(forKey: priority) else { return nil }
        defer { lanes[priority] = lane }
        // Stale entries at the front are dropped for good.
        while let first = lane.first, queued[first.id] != first.ticket {
            lane.removeFirst()
        }
        var index = lane.startIndex
        while index != lane.endIndex {
            let entry = lane[index]
            if queued[entry.id] == entry.ticket, hostHasRoom(entry.host) {
                lane.remove(at: index)
                queued[entry.id] = nil
                runningHosts[entry.id] = entry.host
                runningPerHost[entry.host, default: 0] += 1
                return entry.id
            }
            index = lane.index(after: index)
        }
        return nil
    }

    private func hostHasRoom(_ host: String) -> Bool {
        guard let perHost = limits.perHost else { return true }
        return runningPerHost[host, default: 0] < perHost
    }

    private mutating func dropEmptyLanes() {
        priorities.removeAll { priority in
            if lanes[priority]?.isEmpty ?? true {
                lanes[priority] = nil
                return true
            }
            return false
        }
    }
}
