import GRDB
import NIOConcurrencyHelpers

/// Coalesces concurrent writes into shared transactions ("group commit").
///
/// Why: a manager checkpoints many downloads at once, and each transaction costs a WAL append,
/// a lock round trip and, at checkpoints, an fsync. Writing each call in its own transaction
/// would make callers queue behind each other for work that one transaction can do.
///
/// How: the first caller to find the store idle becomes the *leader* and writes its change. While
/// that transaction is being written, later callers wait in a queue. When it commits, the leader
/// hands over to the first waiter, which writes its own change and everything queued behind it
/// in ONE transaction; and so on. Changes are applied in arrival order, so a later save of the
/// same ID wins. Each caller returns only once the transaction holding its change committed, so
/// the durability promise to each caller is the same as with one transaction each; a
/// transaction that fails fails every caller in it.
///
/// Writes run on GRDB's writer queue through its callback API (or, for PostgreSQL, in a task of
/// their own), never in a caller's cancellable task: a caller's cancellation must not abort a
/// transaction that carries other callers' rows.
final class GroupCommitter: Sendable {
    typealias Apply = @Sendable (Database, [StoreWrite]) throws -> Void
    typealias Failure = @Sendable (any Error) -> HaulError
    /// Writes a batch in one transaction of the store's own.
    typealias Commit = @Sendable ([StoreWrite]) async -> Result<Void, HaulError>

    private enum Turn: Sendable {
        case lead
        case done(Result<Void, HaulError>)
    }

    private struct Waiter: Sendable {
        var write: StoreWrite
        var continuation: CheckedContinuation<Turn, Never>
    }

    private struct State: Sendable {
        /// True from the moment a leader is chosen until the queue is found empty.
        var writing = false
        var queue: [Waiter] = []
        /// Writes submitted and not yet committed (or failed), the leader's batch included.
        var pending = 0
        var transactions = 0
    }

    private let commit: Commit
    private let state = NIOLockedValueBox(State())

    /// A committer for a SQLite store.
    /// - Parameters:
    ///   - apply: performs a batch of changes inside the transaction the committer opened.
    ///   - failure: turns whatever the database threw into the error every caller receives.
    convenience init(writer: any DatabaseWriter, apply: @escaping Apply, failure: @escaping Failure) {
        self.init { writes in
            await withCheckedContinuation { continuation in
                writer.asyncWrite({ db in try apply(db, writes) }, completion: { _, result in
                    continuation.resume(returning: result.mapError(failure))
                })
            }
        }
    }

    /// A committer whose `commit` writes each batch in one transaction.
    init(commit: @escaping Commit) {
        self.commit = commit
    }

    /// How many transactions were committed so far (observed by tests to see coalescing).
    var transactionsCommitted: Int { state.withLockedValue { $0.transactions } }

    /// How many writes were submitted and have not yet committed (or failed).
    var pendingWrites: Int { state.withLockedValue { $0.pending } }

    /// Applies `write` in a transaction shared with any concurrent writes; returns once committed.
    func submit(_ write: StoreWrite) async throws(HaulError) {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let leads = state.withLockedValue { state in
                state.pending += 1
                if state.writing {
                    state.queue.append(Waiter(write: write, continuation: continuation))
                    return false
                }
                state.writing = true
                return true
            }
            if leads { continuation.resume(returning: .lead) }
        }
        switch turn {
        case .done(let result):
            try result.get()
        case .lead:
            try await lead(with: write).get()
        }
    }

    /// Writes `own` with everything queued, wakes the writers it carried, and hands over.
    private func lead(with own: StoreWrite) async -> Result<Void, HaulError> {
        let followers = state.withLockedValue { state in
            defer { state.queue.removeAll() }
            return state.queue
        }
        let result = await commit([own] + followers.map(\.write))
        state.withLockedValue { state in
            state.pending -= 1 + followers.count
            if case .success = result { state.transactions += 1 }
        }
        for follower in followers { follower.continuation.resume(returning: .done(result)) }
        let next = state.withLockedValue { state -> Waiter? in
            guard !state.queue.isEmpty else {
                state.writing = false
                return nil
            }
            return state.queue.removeFirst()
        }
        next?.continuation.resume(returning: .lead)
        return result
    }
}
