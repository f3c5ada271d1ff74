import NIOConcurrencyHelpers
import PostgresNIO

/// A time limit on every operation of the PostgreSQL store.
///
/// When the server ends a connection while a query is under way on it (a restart, a
/// `pg_terminate_backend`, a failover), postgres-nio (1.33) does not always fail that query:
/// now and then it waits forever, for a connection from the pool or for the rows of a
/// statement. A write that never returns holds up every write after it (they run in order),
/// and a claim that never returns stops a fleet member from taking work: seen in
/// `FleetStoreOutageTests`, where a member stopped for good after a round of ended connections.
///
/// So an operation that has not answered within the store's `operationTimeLimit` is given up: the caller
/// gets `.connectionFailed` (the store cannot be reached, try again later), the connection it
/// was using is closed, and the stuck task is cancelled and left to end whenever it does.
/// A transaction whose connection is closed before its `COMMIT` reached the server is rolled
/// back by it; one given up while its `COMMIT` was under way is looked up before the caller
/// hears of it (`PostgresStore+CommitOutcome`).
extension PostgresStore {
    /// Long beside any transaction of the store, lock waits included: milliseconds each, yet
    /// more than 15 s now and then for a batch queued behind other daemons' on one session's
    /// rows on a loaded machine (the test suite's, where a limit of 15 s failed five tests).
    /// A store stuck on a dead connection is back within the minute.
    static let defaultOperationTimeLimit = Duration.seconds(60)

    /// The connection an operation is using, for the watchdog to close.
    final class Watch: Sendable {
        private let connection = NIOLockedValueBox<PostgresConnection?>(nil)

        /// Called by the operation once it has a connection.
        func using(_ connection: PostgresConnection) {
            self.connection.withLockedValue { $0 = connection }
        }

        fileprivate var current: PostgresConnection? { connection.withLockedValue { $0 } }
    }

    /// Runs `operation`; after `limit` without an answer, throws `.connectionFailed` naming
    /// `action`, closes the connection the operation said it uses, and cancels it.
    static func answering<Value: Sendable>(
        within limit: Duration, _ action: String, address: PostgresAddress,
        _ operation: @escaping @Sendable (Watch) async throws -> Value
    ) async throws -> Value {
        let watch = Watch()
        let waiting = NIOLockedValueBox<CheckedContinuation<Value, any Error>?>(nil)
        func take() -> CheckedContinuation<Value, any Error>? {
            waiting.withLockedValue { waiting in
                defer { waiting = nil }
                return waiting
            }
        }
        let timeout = HaulError(
            .connectionFailed,
            "cannot \(action) in \(address): the server did not answer within \(limit.inSeconds) s (a connection it ended?)")
        let tasks = NIOLockedValueBox<(work: Task<Void, Never>?, watchdog: Task<Void, Never>?)>((nil, nil))
        defer { tasks.withLockedValue { $0.watchdog?.cancel() } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                waiting.withLockedValue { $0 = continuation }
                let work = Task {
                    do {
                        let value = try await operation(watch)
                        take()?.resume(returning: value)
                    } catch {
                        take()?.resume(throwing: error)
                    }
                }
                let watchdog = Task {
                    do { try await Task.sleep(for: limit) } catch { return }
                    guard let continuation = take() else { return }
                    continuation.resume(throwing: timeout)
                    work.cancel()
                    try? await watch.current?.close()
                }
                tasks.withLockedValue { $0 = (work, watchdog) }
            }
        } onCancel: {
            // The caller's cancellation reaches the operation as it would without the limit.
            tasks.withLockedValue { $0.work?.cancel() }
        }
    }
}
