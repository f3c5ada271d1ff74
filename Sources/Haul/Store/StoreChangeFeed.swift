import NIOConcurrencyHelpers

/// What other processes changed in a shared store: the sessions whose outbox grew, and work
/// added to or given back to a queue. A PostgreSQL store fills it from its `LISTEN` connection
/// (`PostgresListener`); a SQLite store has none, since one process owns its file and its own
/// writes wake its own waiters.
///
/// Notifications can be lost (the listening connection dropped); the feed then reports that
/// every session may have changed (`everythingMayHaveChanged`), and its readers poll every
/// `fallbackPollInterval` anyway.
///
/// Race-free waiting: a reader takes `generation(of:)` before it reads the store, and observes
/// with `observeEvents(of:unchangedSince:)` after an empty read; when something arrived in
/// between, observing refuses and the reader reads again instead of sleeping.
package final class StoreChangeFeed: Sendable {
    /// A change to the queues: a session whose downloads were added, resumed or released, or
    /// nil when any session may have changed (after notifications were lost).
    package typealias QueueChange = String?

    private struct State {
        /// Bumped for a session at each notification about its outbox.
        var generations: [String: UInt64] = [:]
        /// Bumped when every session may have changed.
        var everything: UInt64 = 0
        var nextObserver = 0
        var observers: [Int: (session: String, wake: @Sendable () -> Void)] = [:]
        var queueContinuations: [Int: AsyncStream<QueueChange>.Continuation] = [:]
        var controlContinuations: [Int: AsyncStream<QueueChange>.Continuation] = [:]
        var started = false
    }

    private let state = NIOLockedValueBox(State())
    private let fallback: NIOLockedValueBox<Duration>
    /// Started once, by the first reader (a process that never waits opens no connection).
    private let start: @Sendable (StoreChangeFeed) -> Void

    /// How often a waiting reader looks at the store even without a notification.
    package var fallbackPollInterval: Duration {
        get { fallback.withLockedValue { $0 } }
        set { fallback.withLockedValue { $0 = newValue } }
    }

    init(fallbackPollInterval: Duration = .seconds(3), start: @escaping @Sendable (StoreChangeFeed) -> Void) {
        self.fallback = NIOLockedValueBox(fallbackPollInterval)
        self.start = start
    }

    // MARK: Readers

    /// A value that changes whenever the outbox of `session` may have grown.
    func generation(of session: String) -> UInt64 {
        startIfNeeded()
        return state.withLockedValue { $0.generations[session, default: 0] &+ $0.everything }
    }

    /// Calls `wake` (once at most, from any thread) at the next change to the outbox of
    /// `session`; nil, without calling it, when a change came after `generation` was taken.
    func observeEvents(of session: String, unchangedSince generation: UInt64, wake: @escaping @Sendable () -> Void) -> Int? {
        state.withLockedValue { state in
            guard state.generations[session, default: 0] &+ state.everything == generation else { return nil }
            state.nextObserver += 1
            state.observers[state.nextObserver] = (session, wake)
            return state.nextObserver
        }
    }

    /// Readers waiting for a change now (for tests that must know a wait has begun).
    var waitingReaders: Int { state.withLockedValue { $0.observers.count } }

    func stopObserving(_ token: Int) {
        _ = state.withLockedValue { $0.observers.removeValue(forKey: token) }
    }

    /// Work was added to or released in a queue, by this daemon or another: the hook for a
    /// daemon's claim loop (each change is a reason to claim now rather than at its next poll).
    /// Each call is an independent subscriber; the stream ends when the subscriber stops.
    package func queueChanges() -> AsyncStream<QueueChange> {
        subscribe(\.queueContinuations)
    }

    /// Sessions in which a pause or cancel was asked of a download another daemon runs (nil:
    /// any, after notifications were lost): the hook for the owner to read the requests of its
    /// leases now (`DownloadManager.fleetNotified`). Each call is an independent subscriber.
    package func controlRequests() -> AsyncStream<QueueChange> {
        subscribe(\.controlContinuations)
    }

    /// A new subscriber in one of the tables of continuations, removed when it stops.
    private func subscribe(_ table: WritableKeyPath<State, [Int: AsyncStream<QueueChange>.Continuation]> & Sendable) -> AsyncStream<QueueChange> {
        startIfNeeded()
        let (stream, continuation) = AsyncStream<QueueChange>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = state.withLockedValue { state in
            state.nextObserver += 1
            state[keyPath: table][state.nextObserver] = continuation
            return state.nextObserver
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLockedValue { $0[keyPath: table].removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Notifications (from the listener)

    /// A control was asked in `session` (a `haul_control` notification).
    func controlRequested(session: String) {
        for continuation in state.withLockedValue({ Array($0.controlContinuations.values) }) {
            continuation.yield(session)
        }
    }

    /// The outbox of `session` grew (a `haul_events` notification).
    func eventsAppended(session: String) {
        let wakes = state.withLockedValue { state -> [@Sendable () -> Void] in
            state.generations[session, default: 0] &+= 1
            let due = state.observers.filter { $0.value.session == session }
            for key in due.keys { state.observers.removeValue(forKey: key) }
            return due.values.map(\.wake)
        }
        for wake in wakes { wake() }
    }

    /// Work was added to or released in the queue of `session` (a `haul_queue` notification).
    func queueChanged(session: String) {
        for continuation in state.withLockedValue({ Array($0.queueContinuations.values) }) {
            continuation.yield(session)
        }
    }

    /// Notifications may have been lost (the listening connection was new or came back):
    /// every waiting reader reads again, every claim loop looks at every queue.
    func everythingMayHaveChanged() {
        let (wakes, continuations) = state.withLockedValue { state in
            state.everything &+= 1
            defer { state.observers = [:] }
            return (state.observers.values.map(\.wake), Array(state.queueContinuations.values) + Array(state.controlContinuations.values))
        }
        for wake in wakes { wake() }
        for continuation in continuations { continuation.yield(nil) }
    }

    private func startIfNeeded() {
        let first = state.withLockedValue { state in
            defer { state.started = true }
            return !state.started
        }
        if first { start(self) }
    }
}
