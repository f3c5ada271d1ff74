/// Forgetting finished downloads beyond the retention rule (`Configuration.retention`), so that
/// what a manager holds, and what its store keeps, does not grow with its history.
extension DownloadManager {
    /// A download reached a terminal state: it may be forgotten now if it has no group, or
    /// once its group completes (`groupCompletedForRetention`).
    func finishedForRetention(_ id: DownloadID) {
        guard let record = records[id], record.group == nil else { return }
        dueToForget += retention.mayForget(CollectionOfOne(id))
    }

    /// Every finished member of a completed group may be forgotten from now on.
    func groupCompletedForRetention(_ name: String) {
        guard let members = groups[name]?.members else { return }
        dueToForget += retention.mayForget(members.lazy.filter { self.records[$0]?.isFinished == true })
    }

    /// Forgets what the retention rule handed back: out of memory and, with the next write,
    /// out of the store. Runs after an action is carried out, never in the middle of one, so
    /// that a download's own bookkeeping (its waiters, its events) is complete first.
    func forgetDue() {
        guard !dueToForget.isEmpty else { return }
        let ids = dueToForget
        dueToForget = []
        var touchedGroups: Set<String> = []
        for id in ids {
            guard let record = detach(id) else { continue }
            if let group = record.group { touchedGroups.insert(group) }
            writes.forgotten(id)
        }
        if !touchedGroups.isEmpty {
            let gone = Set(ids)
            // Only finished members are forgotten: the unfinished counts stay as they are.
            for name in touchedGroups where groups.remove(gone, from: name, unfinished: 0, deletingIfEmpty: true) {
                writes.groupForgotten(name)
            }
        }
        compactOrderIfWorthIt()
        carryOut(writes.flushOwed())
    }

    /// `order` keeps forgotten IDs until they are most of it (listing skips them): removing
    /// each one at once would cost a pass over every download per forgotten one.
    func compactOrderIfWorthIt() {
        guard droppedFromOrder > 1024, droppedFromOrder * 2 > order.count else { return }
        order.removeAll { !records.contains($0) }
        droppedFromOrder = 0
    }
}
