import NIOConcurrencyHelpers
import PostgresNIO

/// What became of a transaction whose `COMMIT` went unanswered.
///
/// When a connection ends after the server has received `COMMIT`, the client cannot tell from
/// the error whether the transaction committed: the server may have made it durable and then
/// lost the connection before answering (a `pg_terminate_backend`, a restart, a network cut),
/// or stopped before. Treating every such failure as "nothing happened" makes the caller write
/// the same batch again. Most writes can take that (an upsert, a delete), but not every one: a
/// batch that appended a download's `completed` event to the outbox appended it twice, and
/// an app saw the download complete twice (`FleetStoreOutageTests`, in a CI run).
///
/// So every transaction asks the server for its transaction ID as its last statement before
/// `COMMIT` (`txid_current()`), and a transaction that failed after that point is looked up
/// (`txid_status`) on another connection until the server says: committed (the caller gets
/// the body's value, as if the answer had arrived) or aborted (the failure stands, and the
/// caller may write again). The lookup costs one statement per transaction, and a query only
/// after a failed commit.
extension PostgresStore {
    /// The transaction ID and body value of one attempt, once its body finished; sealed when
    /// the attempt's failure is being decided, so that a body finishing after that (the
    /// watchdog gave up on it while it still ran) rolls back instead of committing unseen.
    final class CommitRecord<Value: Sendable>: Sendable {
        private struct State {
            var sent: (xid: Int64, value: Value)?
            var sealed = false
        }

        private let state = NIOLockedValueBox(State())

        /// Called by the body with its transaction ID, right before `COMMIT`. Throws when the
        /// attempt was already given up: the transaction must not commit then.
        func committing(xid: Int64, value: Value) throws {
            try state.withLockedValue { state in
                guard !state.sealed else { throw CancellationError() }
                state.sent = (xid, value)
            }
        }

        /// What the attempt sent, if its body finished; after this, `committing` throws.
        func seal() -> (xid: Int64, value: Value)? {
            state.withLockedValue { state in
                state.sealed = true
                return state.sent
            }
        }
    }

    /// What the server says of a transaction ID.
    enum CommitOutcome: Equatable {
        case committed
        case rolledBack
        /// The server could not be asked within the time given.
        case unknown
    }

    /// The ID of the current transaction (assigning one if it has none yet: a write
    /// transaction has one anyway).
    static func transactionID(on connection: PostgresConnection) async throws -> Int64 {
        guard let xid = try await connection.one("SELECT txid_current()", as: Int64.self) else {
            throw HaulError(.fileSystem, "the server gave no transaction ID")
        }
        return xid
    }

    /// Asks the server, on a connection of the pool, whether transaction `xid` committed:
    /// again while it is still in progress (its connection ends soon) or the server cannot be
    /// reached (it restarts), up to `limit`.
    static func outcome(of xid: Int64, on client: PostgresClient, address: PostgresAddress, within limit: Duration) async -> CommitOutcome {
        let deadline = ContinuousClock.now.advanced(by: limit)
        var pause = Duration.milliseconds(20)
        while !Task.isCancelled {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .unknown }
            let status = try? await answering(within: min(left, .seconds(10)), "look up a transaction", address: address) { watch in
                try await client.withConnection { connection in
                    watch.using(connection)
                    return try await connection.one("SELECT txid_status(\(xid))", as: String.self)
                }
            }
            switch status {
            case "committed": return .committed
            case "aborted": return .rolledBack
            default: break  // in progress, unreachable, or unanswered
            }
            try? await Task.sleep(for: min(pause, max(.zero, deadline - ContinuousClock.now)))
            pause = min(pause * 2, .seconds(1))
        }
        return .unknown
    }
}
