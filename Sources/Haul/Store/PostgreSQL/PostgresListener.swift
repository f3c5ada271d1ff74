import NIOConcurrencyHelpers
import PostgresNIO

/// One connection per daemon `LISTEN`ing on the store's channels, feeding `StoreChangeFeed`:
///
/// - `haul_events`, payload a session: that session's outbox grew (sent by the transaction
///   that appended, at its commit; never for a rolled-back one);
/// - `haul_queue`, payload a session: downloads of that session were queued (added, resumed)
///   or their lease released.
///
/// Outside the pool: a pooled connection goes back to the pool between queries, and a
/// listening one must stay. When the connection drops, notifications sent meanwhile are lost:
/// the listener connects again (backing off from 0.1 s to 5 s) and, once listening, reports
/// that every session may have changed. It reports the same when it first starts listening,
/// so a reader that began waiting before then reads again.
final class PostgresListener: Sendable {
    static let eventsChannel = "haul_events"
    static let queueChannel = "haul_queue"
    /// A pause or cancel was asked of a download another daemon runs (`controlRequest`): its
    /// owner reads the requests for its leases now rather than at its next renewal.
    static let controlChannel = "haul_control"

    private struct State {
        var task: Task<Void, Never>?
        var stopped = false
        /// The server's process ID of the listening connection while it listens (for tests
        /// that drop it, and for the log).
        var listeningProcess: Int32?
        /// Connections made so far (the first one and every reconnection).
        var connections = 0
    }

    private let address: PostgresAddress
    private let state = NIOLockedValueBox(State())

    init(address: PostgresAddress) {
        self.address = address
    }

    /// The server's process ID of the connection while it listens on both channels, else nil.
    var listeningProcess: Int32? { state.withLockedValue { $0.listeningProcess } }
    /// How many times the listener connected (1 once it first listens; more after drops).
    var connections: Int { state.withLockedValue { $0.connections } }

    /// Starts listening for `feed`, for as long as the listener is not stopped.
    func start(feeding feed: StoreChangeFeed) {
        let box = state
        box.withLockedValue { state in
            guard state.task == nil, !state.stopped else { return }
            state.task = Task { [address] in await Self.run(address: address, feed: feed, state: box) }
        }
    }

    func stop() {
        let task = state.withLockedValue { state in
            state.stopped = true
            return state.task
        }
        task?.cancel()
    }

    deinit {
        state.withLockedValue { $0.task }?.cancel()
    }

    private static func run(address: PostgresAddress, feed: StoreChangeFeed, state: NIOLockedValueBox<State>) async {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            if let connection = try? await PostgresFailure.connect(address, waitingUpTo: .zero) {
                let listened = await listen(on: connection, feed: feed, state: state)
                state.withLockedValue { $0.listeningProcess = nil }
                try? await connection.close()
                if listened { backoff = .milliseconds(100) }
            }
            do {
                try await Task.sleep(for: backoff)
            } catch {
                return
            }
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// Listens on the three channels until the connection fails or the task is canceled; true
    /// when it got as far as listening on all of them.
    private static func listen(on connection: PostgresConnection, feed: StoreChangeFeed, state: NIOLockedValueBox<State>) async -> Bool {
        let process = try? await connection.one("SELECT pg_backend_pid()", as: Int32.self)
        let registered = NIOLockedValueBox(0)
        let becameListening: @Sendable () -> Void = {
            let both = registered.withLockedValue { count in
                count += 1
                return count == 3
            }
            guard both else { return }
            feed.everythingMayHaveChanged()
            state.withLockedValue { state in
                state.listeningProcess = process ?? 0
                state.connections += 1
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                _ = try? await connection.listen(on: eventsChannel) { notifications in
                    becameListening()
                    for try await notification in notifications { feed.eventsAppended(session: notification.payload) }
                }
            }
            group.addTask {
                _ = try? await connection.listen(on: queueChannel) { notifications in
                    becameListening()
                    for try await notification in notifications { feed.queueChanged(session: notification.payload) }
                }
            }
            group.addTask {
                _ = try? await connection.listen(on: controlChannel) { notifications in
                    becameListening()
                    for try await notification in notifications { feed.controlRequested(session: notification.payload) }
                }
            }
            // Either channel ending means the connection is gone (or the listener stops).
            await group.next()
            group.cancelAll()
        }
        return registered.withLockedValue { $0 == 3 }
    }
}
