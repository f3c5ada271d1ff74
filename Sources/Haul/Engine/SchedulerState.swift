import NIOCore

/// Decides which queued downloads start, as a value type without I/O.
///
/// It counts running downloads (not connections): globally, per host, with no hidden cap
/// beyond the limits it is given. Higher priority first; first in, first out within a
/// priority. A download blocked by its host's limit does not block others behind it.
///
/// Removal from the middle of the queue (cancel, moves) is lazy: the entry stays in its lane
/// and is skipped when reached, which keeps every operation O(1) amortised even with
/// 100,000 queued downloads.
///
/// A paused download keeps its place, as in aria2's single waiting queue: its entry is *held*,
/// stays in its lane and is passed over by `admit` until it is released. Passing over held
/// entries costs one step each per `admit` scan, like entries blocked by their host's limit.
///
/// A running download that waits for its server gives its slot back (`park`) and takes the
/// next free one, ahead of the queue, once its retry is due (`markDue`): see `ReturningQueue`
/// for the rule.
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
    /// One priority's FIFO of entries.
    private struct Lane: Sendable {
        var entries = CircularBuffer<Entry>(initialCapacity: 16)
        /// Entries before this index are held or stale, so `admit` starts its scan here and a
        /// long run of paused downloads at the front is passed over once, not on every scan.
        /// Reset when an entry before it may have become startable (release, front insert).
        var settled = 0
    }

    /// Priority → FIFO lane.
    private var lanes: [Int: Lane] = [:]
    /// Lane priorities, highest first.
    private var priorities: [Int] = []
    /// The live ticket of every entry in the lanes: queued and held downloads.
    private var waiting: [DownloadID: UInt64] = [:]
    /// Held (paused) downloads among `waiting`, with the group ordinal they count for again
    /// once released (nil without sequential groups or without a group).
    private var held: [DownloadID: HeldEntry] = [:]
    private struct HeldEntry: Sendable {
        let group: Int32?
    }
    /// Queued and running downloads per group ordinal, kept only for sequential groups.
    private var activePerGroup: [Int32: Int] = [:]
    private var groupOf: [DownloadID: Int32] = [:]
    private var nextTicket: UInt64 = 0
    private(set) var runningHosts: [DownloadID: String] = [:]
    private var runningPerHost: [String: Int] = [:]
    /// Downloads that gave their slot back before finishing (`handOver`).
    private var handedOver: Set<DownloadID> = []
    /// Downloads that gave their slot back to wait for their server (`park`).
    private var returning = ReturningQueue()

    init(limits: Limits) {
        precondition(limits.global >= 1, "the global limit must be at least 1")
        self.limits = limits
    }

    /// Downloads waiting for a slot (held ones not counted).
    var queuedCount: Int { waiting.count - held.count }
    var runningCount: Int { runningHosts.count }
    /// Whether the download holds a slot, or held one and handed it over or parked it without
    /// finishing (`finished` ends either).
    func isAdmitted(_ id: DownloadID) -> Bool { runningHosts[id] != nil || handedOver.contains(id) || returning.contains(id) }
    /// Whether the download waits for its server without a slot (parked, due or not).
    func isReturning(_ id: DownloadID) -> Bool { returning.contains(id) }
    /// Whether the download waits for its server without a slot and its retry is due.
    func isDue(_ id: DownloadID) -> Bool { returning.isDue(id) }
    /// Downloads waiting for their server without a slot, in the order they will take one.
    func returningOrder() -> [DownloadID] { returning.order() }
    /// Whether the download waits for a slot (in the queue and not held).
    func isQueued(_ id: DownloadID) -> Bool { waiting[id] != nil && held[id] == nil }
    /// Whether the download is held (paused) at its place in the queue.
    func isHeld(_ id: DownloadID) -> Bool { held[id] != nil }
    /// Whether the download has a place in the queue, held or not.
    func hasPlace(_ id: DownloadID) -> Bool { waiting[id] != nil }

    /// Adds a download to the back (or, with `atFront`, the front) of its priority's lane;
    /// `held` ones keep that place without being started until `release`d.
    mutating func enqueue(_ id: DownloadID, host: String, priority: Int, group: Int32? = nil, held isHeld: Bool = false, atFront: Bool = false) {
        precondition(waiting[id] == nil && runningHosts[id] == nil, "\(id) is already scheduled")
        nextTicket += 1
        waiting[id] = nextTicket
        let counted = limits.sequentialGroups ? group : nil
        if isHeld {
            held[id] = HeldEntry(group: counted)
        } else {
            joinGroup(id, counted)
        }
        if lanes[priority] == nil {
            lanes[priority] = Lane()
            priorities.append(priority)
            priorities.sort(by: >)
        }
        let entry = Entry(id: id, host: host, ticket: nextTicket, group: group)
        if atFront {
            lanes[priority]!.entries.prepend(entry)
            lanes[priority]!.settled = isHeld ? lanes[priority]!.settled + 1 : 0
        } else {
            lanes[priority]!.entries.append(entry)
        }
    }

    /// Takes a download out of the queue, held or not (canceled, removed, or queued again
    /// elsewhere).
    mutating func dequeue(_ id: DownloadID) {
        guard waiting.removeValue(forKey: id) != nil else { return }
        if held.removeValue(forKey: id) == nil { leaveGroup(id) }
    }

    /// A queued download is paused: it keeps its place but is not started, and no longer
    /// holds its sequential group open.
    mutating func hold(_ id: DownloadID) {
        guard waiting[id] != nil, held[id] == nil else { return }
        held[id] = HeldEntry(group: groupOf[id])
        leaveGroup(id)
    }

    /// A held download is resumed: it waits for a slot from the place it kept. Returns false
    /// when it was not held (it has no place; the caller enqueues it).
    @discardableResult
    mutating func release(_ id: DownloadID) -> Bool {
        guard let entry = held.removeValue(forKey: id) else { return false }
        joinGroup(id, entry.group)
        // Its lane is not recorded here; lanes are few, so all of them scan from the start again.
        for priority in priorities { lanes[priority]?.settled = 0 }
        return true
    }

    /// Queued and held downloads in the queue's one order: higher priority first, then lane
    /// order. O(entries in the lanes, stale ones included).
    func waitingOrder() -> [DownloadID] {
        var result: [DownloadID] = []
        result.reserveCapacity(waiting.count)
        for priority in priorities {
            guard let lane = lanes[priority] else { continue }
            for entry in lane.entries where waiting[entry.id] == entry.ticket {
                result.append(entry.id)
            }
        }
        return result
    }

    private mutating func joinGroup(_ id: DownloadID, _ group: Int32?) {
        guard let group else { return }
        groupOf[id] = group
        activePerGroup[group, default: 0] += 1
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
        enterHost(id, host)
    }

    /// A running download waits for its server (after its quick retries): its slot goes to
    /// the next download. It still counts for its group, and is admitted again ahead of the
    /// queue once `markDue` (see `ReturningQueue`); `finished` ends it if it never is.
    mutating func park(_ id: DownloadID) {
        guard let host = runningHosts.removeValue(forKey: id) else { return }
        leaveHost(host)
        returning.park(id, host: host)
    }

    /// A parked download's retry is due: `admit` gives it the next free slot, before any
    /// queued download. Returns false when it was not parked.
    @discardableResult
    mutating func markDue(_ id: DownloadID) -> Bool {
        returning.markDue(id)
    }

    /// A running download gave its slot back, or a parked one stopped waiting (paused,
    /// canceled).
    mutating func finished(_ id: DownloadID) {
        if handedOver.remove(id) != nil || returning.remove(id) {
            leaveGroup(id)
            return
        }
        guard let host = runningHosts.removeValue(forKey: id) else {
            preconditionFailure("\(id) finished but was not running")
        }
        leaveHost(host)
        leaveGroup(id)
    }

    /// The download holds a slot, counted for its host.
    private mutating func enterHost(_ id: DownloadID, _ host: String) {
        runningHosts[id] = host
        runningPerHost[host, default: 0] += 1
    }

    private mutating func leaveHost(_ host: String) {
        runningPerHost[host, default: 1] -= 1
        if runningPerHost[host] == 0 { runningPerHost[host] = nil }
    }

    /// Picks the downloads to start now and marks them running: due parked downloads first,
    /// then the queue.
    mutating func admit() -> [DownloadID] {
        var started: [DownloadID] = []
        while runningHosts.count < limits.global, returning.dueCount > 0 {
            let (perHost, counts) = (limits.perHost, runningPerHost)
            let hostHasRoom = { (host: String) in perHost.map { counts[host, default: 0] < $0 } ?? true }
            guard let (id, host) = returning.takeFirstDue(where: hostHasRoom) else { break }
            enterHost(id, host)
            started.append(id)
        }
        var laneIndex = 0
        while runningHosts.count < limits.global, queuedCount > 0, laneIndex < priorities.count {
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

    /// Admits the first eligible entry of a lane, discarding stale entries at its front and
    /// moving its `settled` mark past held and stale ones on the way.
    private mutating func admitFromLane(_ priority: Int) -> DownloadID? {
        guard var lane = lanes.removeValue(forKey: priority) else { return nil }
        defer { lanes[priority] = lane }
        // Stale entries at the front are dropped for good.
        while let first = lane.entries.first, waiting[first.id] != first.ticket {
            lane.entries.removeFirst()
            lane.settled = max(0, lane.settled - 1)
        }
        lane.settled = min(lane.settled, lane.entries.count)
        let current = currentGroup
        var offset = lane.settled
        var index = lane.entries.index(lane.entries.startIndex, offsetBy: offset)
        while index != lane.entries.endIndex {
            let entry = lane.entries[index]
            if waiting[entry.id] == entry.ticket, held[entry.id] == nil {
                if hostHasRoom(entry.host), entry.group == nil || current == nil || entry.group == current {
                    lane.entries.remove(at: index)
                    waiting[entry.id] = nil
                    enterHost(entry.id, entry.host)
                    return entry.id
                }
            } else if offset == lane.settled {
                lane.settled += 1
            }
            offset += 1
            index = lane.entries.index(after: index)
        }
        return nil
    }

    private func hostHasRoom(_ host: String) -> Bool {
        guard let perHost = limits.perHost else { return true }
        return runningPerHost[host, default: 0] < perHost
    }

    private mutating func dropEmptyLanes() {
        priorities.removeAll { priority in
            if lanes[priority]?.entries.isEmpty ?? true {
                lanes[priority] = nil
                return true
            }
            return false
        }
    }
}
