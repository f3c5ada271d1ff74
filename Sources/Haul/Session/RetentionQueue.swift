/// Which finished downloads a manager forgets, and when (`Retention.maxFinished`): a value type
/// with no I/O, so the rule can be tested alone.
///
/// A download may be forgotten once it has finished and its group (if any) has completed;
/// from then on it waits here, in the order it became forgettable. Whenever more than the
/// bound wait, the oldest are handed back to be forgotten. One that runs again (resumed,
/// continued by a new request) or is removed is withdrawn; should it finish again, it waits
/// from its new place.
struct RetentionQueue {
    let maxFinished: Int?
    /// IDs in the order they became forgettable, by ticket; entries whose ticket is no longer
    /// their download's (withdrawn, or queued again later) are skipped when reached.
    private var queue: [DownloadID] = []
    /// Tickets are positions in `queue` plus `dropped`, so that compaction keeps them valid.
    private var dropped = 0
    private var head = 0
    private var tickets: [DownloadID: Int] = [:]

    init(maxFinished: Int?) {
        self.maxFinished = maxFinished
    }

    /// How many finished downloads may be forgotten now.
    var count: Int { tickets.count }

    /// These downloads may be forgotten from now on. Returns those to forget now to stay
    /// within the bound, oldest first.
    mutating func mayForget(_ ids: some Sequence<DownloadID>) -> [DownloadID] {
        for id in ids where tickets[id] == nil {
            tickets[id] = dropped + queue.count
            queue.append(id)
        }
        let forget = overflow()
        compactIfWorthIt()
        return forget
    }

    /// `id` runs again or is gone: it is not to be forgotten (unless it finishes again).
    mutating func withdraw(_ id: DownloadID) {
        tickets[id] = nil
    }

    private mutating func overflow() -> [DownloadID] {
        guard let maxFinished, tickets.count > maxFinished else { return [] }
        var forget: [DownloadID] = []
        while tickets.count > maxFinished, head < queue.count {
            let id = queue[head]
            if tickets[id] == dropped + head {
                tickets[id] = nil
                forget.append(id)
            }
            head += 1
        }
        return forget
    }

    /// Keeps the array near the number of waiting downloads: drops the consumed front, and
    /// rewrites the array without stale entries once they are most of it.
    private mutating func compactIfWorthIt() {
        if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            dropped += head
            head = 0
        }
        let live = tickets.count
        guard queue.count - head > 2 * live + 1024 else { return }
        var kept: [DownloadID] = []
        kept.reserveCapacity(live)
        for index in head..<queue.count where tickets[queue[index]] == dropped + index {
            kept.append(queue[index])
        }
        dropped += queue.count
        queue = kept
        head = 0
        for (index, id) in kept.enumerated() { tickets[id] = dropped + index }
    }
}
