extension DownloadManager {
    /// The manager's records: one contiguous array plus an index from ID to slot.
    ///
    /// A dictionary of records would keep a whole record per bucket, and with its load factor
    /// that is up to twice the records' own size; here the array holds each record once and
    /// the index costs a few bytes per download. Removal moves the last record into the freed
    /// slot, so order is not kept here (the manager keeps its own `order`).
    struct RecordTable {
        private var slots: [Record?] = []
        private var index: [DownloadID: Int32] = [:]
        /// The gauge of downloads by state, moved here, where every change to a record passes:
        /// a record added, removed, or changed in place into another state. Nil: not reported.
        var stateMeters: DownloadStateMeters?

        var count: Int { index.count }

        /// A download's progress, read in place: summing it over 100,000 downloads on every
        /// progress tick must not copy each record out of the table.
        func progress(of id: DownloadID) -> TransferProgress? {
            guard let slot = index[id] else { return nil }
            return slots[Int(slot)]?.progress
        }

        /// Calls `body` with what a listing or a count needs of each record (in no particular
        /// order), read in place: copying 100,000 records out of the table, or looking each up
        /// by ID, cost tens of milliseconds per daemon call.
        func scan(_ body: (_ id: DownloadID, _ position: Int64, _ state: DownloadState, _ group: String?, _ progress: TransferProgress) -> Void) {
            for slot in slots.indices {
                guard let state = slots[slot]?.machine.publicState else { continue }
                body(slots[slot]!.id, slots[slot]!.position, state, slots[slot]!.group, slots[slot]!.progress)
            }
        }

        /// Every record, in no particular order.
        var values: some Sequence<Record> { slots.lazy.compactMap { $0 } }

        func contains(_ id: DownloadID) -> Bool { index[id] != nil }

        /// Room for `extra` more records. Grows geometrically: a backlog added in many batches
        /// must not reallocate (and fragment the heap with) a whole table per batch.
        mutating func reserveCapacity(_ extra: Int) {
            let needed = slots.count + extra
            if needed > slots.capacity { slots.reserveCapacity(max(needed, slots.capacity * 2)) }
            if needed > index.capacity { index.reserveCapacity(max(needed, index.capacity * 2)) }
        }

        /// Reads copy the record; writes through optional chaining (`table[id]?.x = y`)
        /// change it in place, without copying it out and back.
        ///
        /// The accessor yields the table's own slot (a new one at the end for an ID not in the
        /// table) and keeps no record of its own: a record kept in its frame made adding one
        /// allocate that frame. Any write through it still allocates the coroutine's frame
        /// (heaptrack), so code that writes for every file of a batch uses `update`.
        subscript(id: DownloadID) -> Record? {
            get { index[id].flatMap { slots[Int($0)] } }
            _modify {
                let known = index[id].map(Int.init)
                let slot = known ?? slots.count
                if known == nil { slots.append(nil) }
                let before = slots[slot]?.machine.publicState
                defer {
                    let after = slots[slot]?.machine.publicState
                    if known != nil {
                        if slots[slot] == nil { removeSlot(slot, of: id) }
                    } else if slots[slot] == nil {
                        slots.removeLast()
                    } else {
                        index[id] = Int32(slot)
                    }
                    stateMeters?.moved(from: before, to: after)
                }
                yield &slots[slot]
            }
        }

        /// Runs `body` on the record in place; nil when there is no such record. Unlike
        /// `guard var record = table[id]` … `table[id] = record`, nothing is copied: the
        /// record's details stay uniquely referenced, so changing them allocates nothing.
        mutating func update<T, Failure: Error>(
            _ id: DownloadID, _ body: (inout Record) throws(Failure) -> T
        ) throws(Failure) -> T? {
            guard let slot = index[id].map(Int.init) else { return nil }
            guard let stateMeters else { return try body(&slots[slot]!) }
            let before = slots[slot]!.machine.publicState
            defer { stateMeters.moved(from: before, to: slots[slot]!.machine.publicState) }
            return try body(&slots[slot]!)
        }

        @discardableResult
        mutating func removeValue(forKey id: DownloadID) -> Record? {
            guard let slot = index[id].map(Int.init) else { return nil }
            let record = slots[slot]
            removeSlot(slot, of: id)
            stateMeters?.moved(from: record?.machine.publicState, to: nil)
            return record
        }

        private mutating func removeSlot(_ slot: Int, of id: DownloadID) {
            index[id] = nil
            let last = slots.count - 1
            if slot != last {
                slots.swapAt(slot, last)
                if let moved = slots[slot]?.id { index[moved] = Int32(slot) }
            }
            slots.removeLast()
        }
    }
}
