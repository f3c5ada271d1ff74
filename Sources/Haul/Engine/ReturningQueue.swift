import NIOCore

/// Downloads that were admitted, then gave their slot back to wait for a server that is gone
/// (`SchedulerState.park`), and the order in which they take a slot again.
///
/// The rule, written down once:
/// - A download waiting for its server (after the quick retries, which keep the slot) holds
///   no slot, so that downloads from live servers proceed while a dead one waits, even with
///   one slot.
/// - It keeps the precedence it had: it was admitted before every download still queued, so
///   when its retry is due it takes the next free slot before any download that never
///   started, whatever their priority. This is what aria2 users know (an active download is
///   never overtaken by the waiting queue; Haul only lends its slot while it cannot use it)
///   and what URLSession users know (a task that waits for connectivity is not sent back to
///   the end of anything). A running download is never stopped to make room.
/// - Several due at once take slots in the order they became due; a due download still
///   obeys its host's limit, and one blocked by it does not block others behind it.
/// - Until it has a slot again it stays due, shown as waiting: it is not failed for it.
/// - While it waits it still counts for its group (a sequential group stays current).
///
/// Removing one (paused, canceled) is lazy in the due FIFO, as in `SchedulerState`'s lanes;
/// once its stale entries outnumber the live ones (and are more than a few) it is compacted,
/// so that it stays bounded by the downloads waiting, not by how often they were paused.
struct ReturningQueue: Sendable {
    private struct Entry: Sendable {
        let host: String
        /// Orders the downloads not yet due by when they began waiting.
        let parkedTicket: UInt64
        /// Set once the retry is due; matches the entry's place in `due`.
        var dueTicket: UInt64?
    }

    private var entries: [DownloadID: Entry] = [:]
    /// Due downloads in the order they became due, with stale entries left for lazy removal.
    private var due = CircularBuffer<(id: DownloadID, ticket: UInt64)>(initialCapacity: 4)
    private var nextTicket: UInt64 = 0
    /// Live (not stale) entries of `due`.
    private(set) var dueCount = 0
    /// Stale entries of `due`: left by downloads removed while due.
    private var staleCount = 0

    /// Downloads waiting for their server without a slot, due or not.
    var count: Int { entries.count }

    func contains(_ id: DownloadID) -> Bool { entries[id] != nil }

    func isDue(_ id: DownloadID) -> Bool { entries[id]?.dueTicket != nil }

    /// A download gave its slot back to wait for its server.
    mutating func park(_ id: DownloadID, host: String) {
        nextTicket += 1
        entries[id] = Entry(host: host, parkedTicket: nextTicket)
    }

    /// Its retry is due: it asks for the next free slot. Returns false when it is not parked
    /// (or is due already).
    @discardableResult
    mutating func markDue(_ id: DownloadID) -> Bool {
        guard var entry = entries[id], entry.dueTicket == nil else { return false }
        nextTicket += 1
        entry.dueTicket = nextTicket
        entries[id] = entry
        due.append((id, nextTicket))
        dueCount += 1
        return true
    }

    /// Forgets a download (paused, canceled, or given a slot). Returns whether it was here.
    @discardableResult
    mutating func remove(_ id: DownloadID) -> Bool {
        guard let entry = entries.removeValue(forKey: id) else { return false }
        if entry.dueTicket != nil {
            dueCount -= 1
            staleCount += 1
            if staleCount > 16, staleCount > dueCount { compact() }
        }
        return true
    }

    /// Drops the stale entries of `due`, keeping the live ones in order.
    private mutating func compact() {
        var live = CircularBuffer<(id: DownloadID, ticket: UInt64)>(initialCapacity: max(4, dueCount))
        for item in due where entries[item.id]?.dueTicket == item.ticket { live.append(item) }
        due = live
        staleCount = 0
    }

    /// Entries kept in the due FIFO, stale ones included (tests only: the bound).
    var dueBufferCount: Int { due.count }

    /// Takes the first due download whose host has room, and forgets it.
    mutating func takeFirstDue(where hostHasRoom: (String) -> Bool) -> (id: DownloadID, host: String)? {
        while let first = due.first, entries[first.id]?.dueTicket != first.ticket {
            due.removeFirst()
            staleCount = max(0, staleCount - 1)
        }
        var index = due.startIndex
        while index != due.endIndex {
            let candidate = due[index]
            if let entry = entries[candidate.id], entry.dueTicket == candidate.ticket, hostHasRoom(entry.host) {
                due.remove(at: index)
                // Taken, not stale: it leaves nothing behind in `due`.
                entries[candidate.id] = nil
                dueCount -= 1
                return (candidate.id, entry.host)
            }
            index = due.index(after: index)
        }
        return nil
    }

    /// The order in which they will take slots: the due ones in the order they became due,
    /// then the others in the order they began waiting. O(n log n) in the few that wait.
    func order() -> [DownloadID] {
        let dueOnes = due.filter { entries[$0.id]?.dueTicket == $0.ticket }.map(\.id)
        let others = entries.filter { $0.value.dueTicket == nil }.sorted { $0.value.parkedTicket < $1.value.parkedTicket }.map(\.key)
        return dueOnes + others
    }
}
