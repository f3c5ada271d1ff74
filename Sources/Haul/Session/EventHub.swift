import NIOConcurrencyHelpers

/// Fans events out to any number of subscribers, each with its own `AsyncStream`.
///
/// Every subscriber sees every event emitted after it subscribed, in order. The streams are
/// unbounded because state events must not be dropped; progress events are throttled at the
/// source, so a slow reader accumulates at most a few per second.
final class EventHub: Sendable {
    private struct Subscribers: Sendable {
        var nextID = 0
        var continuations: [Int: AsyncStream<ManagerEvent>.Continuation] = [:]
        var finished = false
    }

    private let subscribers = NIOLockedValueBox(Subscribers())
    private let outbox: OutboxBuffer?

    var keepsOutbox: Bool { outbox != nil }

    var hasSubscribers: Bool { subscribers.withLockedValue { !$0.continuations.isEmpty } }

    init(outbox: OutboxBuffer? = nil) {
        self.outbox = outbox
    }

    func subscribe() -> AsyncStream<ManagerEvent> {
        let (stream, continuation) = AsyncStream<ManagerEvent>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = subscribers.withLockedValue { state in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.continuations[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLockedValue { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: ManagerEvent) {
        if let outbox, let kept = StoredEvent(event) { outbox.append(kept) }
        let targets = subscribers.withLockedValue { Array($0.continuations.values) }
        for continuation in targets { continuation.yield(event) }
    }

    /// Ends every stream; later subscribers get an empty one.
    func finish() {
        let targets = subscribers.withLockedValue { state in
            state.finished = true
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
