import NIOConcurrencyHelpers

/// Fans events out to any number of subscribers, each with its own `AsyncStream`.
///
/// Every subscriber sees every event emitted after it subscribed, in order. The streams are
/// unbounded because state events must not be dropped; progress events are throttled at the
/// source, so a slow reader accumulates at most a few per second.
final class EventHub: Sendable {
    private struct Subscriber: Sendable {
        let continuation: AsyncStream<ManagerEvent>.Continuation
        let kinds: ManagerEventKinds
    }

    private struct Subscribers: Sendable {
        var nextID = 0
        var continuations: [Int: Subscriber] = [:]
        /// The kinds some subscriber follows.
        var followed: ManagerEventKinds = []
        var finished = false

        mutating func refreshFollowed() {
            followed = continuations.values.reduce(into: []) { $0.formUnion($1.kinds) }
        }
    }

    private let subscribers = NIOLockedValueBox(Subscribers())
    private let outbox: OutboxBuffer?

    var keepsOutbox: Bool { outbox != nil }

    /// Whether a subscriber follows events of `kind` (the outbox aside): for events that are
    /// never kept, such as progress, and cost something to build.
    func follows(_ kind: ManagerEventKinds) -> Bool {
        subscribers.withLockedValue { $0.followed.contains(kind) }
    }

    init(outbox: OutboxBuffer? = nil) {
        self.outbox = outbox
    }

    /// A new stream of the events of these kinds from now on.
    func subscribe(_ kinds: ManagerEventKinds = .all) -> AsyncStream<ManagerEvent> {
        let (stream, continuation) = AsyncStream<ManagerEvent>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = subscribers.withLockedValue { state in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.continuations[state.nextID] = Subscriber(continuation: continuation, kinds: kinds)
            state.followed.formUnion(kinds)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLockedValue { state in
                state.continuations.removeValue(forKey: id)
                state.refreshFollowed()
            }
        }
        return stream
    }

    /// Whether an event of `kind` would reach anyone (a subscriber, or the outbox): callers
    /// skip building events that would not.
    func wants(_ kind: ManagerEventKinds) -> Bool {
        outbox != nil || subscribers.withLockedValue { $0.followed.contains(kind) }
    }

    func emit(_ event: ManagerEvent) {
        if let outbox, let kept = StoredEvent(event) { outbox.append(kept) }
        let kind = event.kind
        let targets = subscribers.withLockedValue { state -> [AsyncStream<ManagerEvent>.Continuation] in
            guard state.followed.contains(kind) else { return [] }
            return state.continuations.values.compactMap { $0.kinds.contains(kind) ? $0.continuation : nil }
        }
        for continuation in targets { continuation.yield(event) }
    }

    /// Ends every stream; later subscribers get an empty one.
    func finish() {
        let targets = subscribers.withLockedValue { state in
            state.finished = true
            defer { state.continuations = [:] }
            return state.continuations.values.map(\.continuation)
        }
        for continuation in targets { continuation.finish() }
    }
}
