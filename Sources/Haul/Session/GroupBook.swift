/// The manager's groups: their members and how many of them are unfinished, in one value type
/// whose methods are the only way those counters change, so that the count a group's
/// completion depends on cannot drift between the places that add, finish, reopen, move and
/// forget downloads.
struct GroupBook {
    private var groups: [String: GroupRecord] = [:]
    /// Ordinals given so far (sequential scheduling runs groups in creation order).
    private var created: Int32 = 0

    subscript(name: String) -> GroupRecord? { groups[name] }

    var names: Dictionary<String, GroupRecord>.Keys { groups.keys }

    /// Creates the group unless it exists.
    mutating func create(_ name: String) {
        guard groups[name] == nil else { return }
        groups[name] = GroupRecord(name: name, ordinal: created)
        created += 1
    }

    /// A member joins (created with the group if needed), counted unfinished unless it is not.
    mutating func add(_ id: DownloadID, to name: String, finished: Bool = false) {
        create(name)
        groups[name]!.members.append(id)
        if !finished { groups[name]!.unfinished += 1 }
    }

    /// Counts one unfinished place-holder, so that the group does not complete before members
    /// still to come are added; `memberFinished(in:)` ends it.
    mutating func hold(_ name: String) {
        create(name)
        groups[name]!.unfinished += 1
        groups[name]!.holds += 1
    }

    /// Ends one `hold(_:)`. Returns true when this completed the group.
    mutating func releaseHold(_ name: String) -> Bool {
        guard let record = groups[name], record.holds > 0 else { return false }
        groups[name]!.holds -= 1
        return memberFinished(in: name)
    }

    /// A member reached a terminal state. Returns true when this completed the group.
    mutating func memberFinished(in name: String) -> Bool {
        guard groups[name] != nil else { return false }
        groups[name]!.unfinished -= 1
        return groups[name]!.unfinished == 0
    }

    /// A finished member runs again.
    mutating func memberReopened(in name: String) {
        groups[name]?.unfinished += 1
    }

    /// A member moves to another group (a request made again in a new group).
    mutating func move(_ id: DownloadID, from old: String?, to name: String, finished: Bool) {
        if let old { remove([id], from: old, unfinished: finished ? 0 : 1) }
        add(id, to: name, finished: finished)
    }

    /// Members move to another group together (requests made again in a new group): each
    /// group they leave is rewritten once, not once a member, which made a re-run of a batch
    /// of N files cost N² hashes.
    mutating func move(_ moves: [(id: DownloadID, from: String?, finished: Bool)], to name: String) {
        var leaving: [String: (ids: Set<DownloadID>, unfinished: Int)] = [:]
        for move in moves {
            if let old = move.from {
                leaving[old, default: ([], 0)].ids.insert(move.id)
                if !move.finished { leaving[old]!.unfinished += 1 }
            }
            add(move.id, to: name, finished: move.finished)
        }
        for (old, left) in leaving { remove(left.ids, from: old, unfinished: left.unfinished) }
    }

    /// Members leave the group (removed, moved, or forgotten by retention); `unfinished` of
    /// them had not finished. With `deletingIfEmpty`, a group left empty is deleted, and true
    /// is returned.
    @discardableResult
    mutating func remove(_ ids: Set<DownloadID>, from name: String, unfinished: Int, deletingIfEmpty: Bool = false) -> Bool {
        guard groups[name] != nil else { return false }
        groups[name]!.members.removeAll { ids.contains($0) }
        groups[name]!.unfinished -= unfinished
        guard deletingIfEmpty, groups[name]!.members.isEmpty else { return false }
        groups[name] = nil
        return true
    }
}

/// The manager's bookkeeping for one group.
struct GroupRecord: Sendable {
    let name: String
    /// Creation order, for sequential group scheduling.
    let ordinal: Int32
    var members: [DownloadID] = []
    /// Members not yet finished, and the holds (`GroupBook.hold(_:)`) not yet released.
    var unfinished = 0
    /// Holds not yet released: place-holders counted in `unfinished`.
    var holds = 0

    init(name: String, ordinal: Int32) {
        self.name = name
        self.ordinal = ordinal
    }
}
