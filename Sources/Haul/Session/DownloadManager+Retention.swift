/// Forgetting finished downloads beyond the retention rule (`Configuration.retention`), so that
/// what a manager holds, and what its store keeps, does not grow with its history.
///
/// With an event outbox, what the client has not acknowledged is not forgotten: a download
/// whose end is reported by a kept event, or whose group's completion is, is pinned (`pins`)
/// until the client acknowledges that event, and only then counts against the bound.
extension DownloadManager {
    /// A download reached a terminal state: it may be forgotten now if it has no group, or
    /// once its group completes (`groupCompletedForRetention`); with an outbox, once the
    /// client has also acknowledged its end.
    func finishedForRetention(_ id: DownloadID) {
        guard records[id]?.group == nil, mayBeForgotten(id) else { return }
        dueToForget += retention.mayForget(CollectionOfOne(id))
    }

    /// Every finished member of a completed group may be forgotten from now on; with an
    /// outbox, once the client has acknowledged the group's completion and their ends.
    func groupCompletedForRetention(_ name: String) {
        if outbox != nil {
            pins.groups.insert(name)
            return
        }
        guard let members = groups[name]?.members else { return }
        dueToForget += retention.mayForget(members.lazy.filter { self.records[$0]?.isFinished == true })
    }

    /// The client acknowledged the events that pinned `acknowledged`: what they held may be
    /// forgotten now, as the rule says.
    func unpin(_ acknowledged: OutboxPins) {
        guard !acknowledged.isEmpty else { return }
        pins.downloads.subtract(acknowledged.downloads)
        pins.groups.subtract(acknowledged.groups)
        var candidates = Array(acknowledged.downloads)
        for name in acknowledged.groups { candidates += groups[name]?.members ?? [] }
        dueToForget += retention.mayForget(candidates.lazy.filter { self.mayBeForgotten($0) })
        forgetDue()
    }

    /// Finished, its end acknowledged (or no outbox), and its group (if any) completed with
    /// its completion acknowledged.
    func mayBeForgotten(_ id: DownloadID) -> Bool {
        guard let record = records[id], record.isFinished, !pins.downloads.contains(id) else { return false }
        guard let group = record.group else { return true }
        return groups[group]?.unfinished == 0 && !pins.groups.contains(group)
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
