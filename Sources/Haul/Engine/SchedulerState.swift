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
        /// Downloads fetching at once, across all hosts (see `handOver`).
        var global: Int
        /// Downloads fetching at once against one host; nil means only the global limit applies.
        var perHost: Int?
        /// Groups one after another: see `GroupOrder.sequential`.
        var sequentialGroups = false
    }

    private struct Entry: Sendable {
        let id: DownloadID
        let host: String
        /// Distinguishes a re-queued entry from its stale, lazily removed predecessor.
        let ticket: UInt64
        /// The group's place in creation order; nil for a download without a group.
        let group: Int32?
    }

    var limits: Limits
    /// Priority → FIFO lane.
    private var lanes: [Int: CircularBuffer<Entry>] = [:]
    /// Lane priorities, highest first.
    private var priorities: [Int] = []
    /// The live ticket of every queued download.
    private var queued: [DownloadID: UInt64] = [:]
    /// Queued and running downloads per group ordinal, kept only for sequential groups.
    private var activePerGroup: [Int32: Int] = [:]
    private var groupOf: [DownloadID: Int32] = [:]
    private var nextTicket: UInt64 = 0
    private(set) var runningHosts: [DownloadID: String] = [:]
    private var runningPerHost: [String: Int] = [:]
    /// Downloads that gave their slot back before finishing (`handOver`).
    private var handedOver: Set<DownloadID> = []

    init(limits: Limits) {
        precondition(limits.global >= 1, "the global limit must be at least 1")
        self.limits = limits
    }

    var queuedCount: Int { queued.count }
    var runningCount: Int { runningHosts.count }
    /// Whether the download holds a slot, or held one and handed it over without finishing.
    func isAdmitted(_ id: DownloadID) -> Bool { runningHosts[id] != nil || handedOver.contains(id) }
    func isQueued(_ id: DownloadID) -> Bool { queued[id] != nil }

    /// Adds a download to the back of its priority's lane.
    mutating func enqueue(_ id: DownloadID, host: String, priority: Int, group: Int32? = nil) {
        precondition(queued[id] == nil && runningHosts[id] == nil, "\(id) is already scheduled")
        nextTicket += 1
        queued[id] = nextTicket
        if limits.sequentialGroups, let group {
            groupOf[id] = group
            activePerGroup[group, default: 0] += 1
        }
        if lanes[priority] == nil {
            lanes[priority] = CircularBuffer(initialCapacity: 16)
            priorities.append(priority)
            priorities.sort(by: >)
        }
        lanes[priority]!.append(Entry(id: id, host: host, ticket: nextTicket, group: group))
    }

    /// Takes a queued download out of the queue (paused or canceled while waiting).
    mutating func dequeue(_ id: DownloadID) {
        guard queued.removeValue(forKey: id) != nil else { return }
        leaveGroup(id)
    }

    private mutating func leaveGroup(_ id: DownloadID) {
        guard let group = groupOf.removeValue(forKey: id) else { return }
        activePerGroup[group, default: 1] -= 1
        if activePerGroup[group] == 0 { activePerGroup[group] = nil }
    }

    /// With sequential groups, the one group whose downloads may start now: the earliest with
    /// anything queued or running. Downloads without a group are never held back.
    private var currentGroup: Int32? {
        limits.sequentialGroups ? activePerGroup.keys.min() : nil
    }

    /// A running download needs no connection any more (its bytes are all here) but has not
    /// finished: its slot goes to the next download. It still counts for its group, so that a
    /// sequential group is not left before its last file is in place. `finished` follows.
    mutating func handOver(_ id: DownloadID) {
        guard let host = runningHosts.removeValue(forKey: id) else { return }
        leaveHost(host)
        handedOver.insert(id)
    }

    /// A handed-over download needs a connection again (placing its file failed and it will
    /// try again): it takes its slot back at once, even above the limit, since it was
    /// admitted already; the limit holds again as soon as it or another download finishes.
    mutating func reclaim(_ id: DownloadID, host: String) {
        guard handedOver.remove(id) != nil else { return }
        runningHosts[id] = host
        runningPerHost[host, default: 0] += 1
    }

    /// A running download gave its slot back.
    mutating func finished(_ id: DownloadID) {
        if handedOver.remove(id) != nil {
            leaveGroup(id)
            return
        }
        guard let host = runningHosts.removeValue(forKey: id) else {
            preconditionFailure("\(id) finished but was not running")
        }
        leaveHost(host)
        leaveGroup(id)
    }

    private mutating func leaveHost(_ host: String) {
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
        let current = currentGroup
        var index = lane.startIndex
        while index != lane.endIndex {
            let entry = lane[index]
            if queued[entry.id] == entry.ticket, hostHasRoom(entry.host), entry.group == nil || current == nil || entry.group == current {
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
