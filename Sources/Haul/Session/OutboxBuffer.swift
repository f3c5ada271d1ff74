import NIOConcurrencyHelpers

/// Events emitted since the last store write, in emission order. Filled from wherever an
/// event is emitted (the manager, or a transfer reporting that it started) and drained by the
/// manager's next write, which stores them with the states they report.
final class OutboxBuffer: Sendable {
    private let pending = NIOLockedValueBox<[StoredEvent]>([])

    func append(_ event: StoredEvent) {
        pending.withLockedValue { $0.append(event) }
    }

    func drain() -> [StoredEvent] {
        pending.withLockedValue { events in
            defer { events = [] }
            return events
        }
    }

    /// Puts back events whose write failed, ahead of any emitted since.
    func restore(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        pending.withLockedValue { $0.insert(contentsOf: events, at: 0) }
    }

    var isEmpty: Bool { pending.withLockedValue { $0.isEmpty } }
}
