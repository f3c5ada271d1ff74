import Foundation

/// Writes handed to a transaction that is already open, as their caller makes them
/// (`StoreWrite.arriving`).
///
/// Why: a batch of thousands of downloads is accepted whole, in one transaction, before its
/// first transfer may start; the manager spends tens of milliseconds making the batch's IDs,
/// records and rows while the store's writer idles, and the writer then spends as long again
/// inserting them while the manager idles. With the writes handed over in slices, the writer
/// inserts the first slices while the manager makes the next, and the one transaction still
/// commits the whole batch or nothing.
///
/// The writer waits (blocks its thread) for the next write or the end, so only a store that
/// applies writes on a thread of its own may take one before it is ended
/// (`DownloadStoring.takesWritesAsTheyArrive`); and the caller must `end()` it before it waits
/// for anything the store does, or the two wait for each other. Every write is kept until the
/// object goes, so that a store that tries a transaction again reads them again from the first.
final class ArrivingWrites: @unchecked Sendable {
    // Sendable: every stored property is read and written under `condition`.
    private let condition = NSCondition()
    private var writes: [StoreWrite] = []
    private var ended = false
    private var isAbandoned = false

    init() {}

    /// Hands one more write to the transaction.
    func add(_ write: StoreWrite) {
        condition.lock()
        precondition(!ended, "a write added to ArrivingWrites after its end")
        writes.append(write)
        condition.signal()
        condition.unlock()
    }

    /// No write follows: the transaction may commit once it applied those added.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// No write follows, and those added must not commit: the caller gave up the batch.
    func abandon() {
        condition.lock()
        ended = true
        isAbandoned = true
        condition.broadcast()
        condition.unlock()
    }

    /// The write at `index` (from 0), waiting until it is added; nil once the writes ended
    /// before it. Throws once they were abandoned, so that the transaction rolls back.
    func write(at index: Int) throws(AbandonedWrites) -> StoreWrite? {
        condition.lock()
        defer { condition.unlock() }
        while index >= writes.count, !ended { condition.wait() }
        if isAbandoned { throw AbandonedWrites() }
        return index < writes.count ? writes[index] : nil
    }

    /// What the store's transaction throws for abandoned writes: it rolls back.
    struct AbandonedWrites: Error {}

    /// Every write, for a store that takes them only once they ended.
    var endedWrites: [StoreWrite] {
        condition.lock()
        defer { condition.unlock() }
        precondition(ended, "ArrivingWrites read whole before its end")
        return isAbandoned ? [] : writes
    }
}
