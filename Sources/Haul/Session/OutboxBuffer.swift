import NIOConcurrencyHelpers

/// Events emitted since the last store write, in emission order. Filled from wherever an
/// event is emitted (the manager, or a transfer reporting that it started) and drained by the
/// manager's next write, which stores them with the states they report.
final class OutboxBuffer: Sendable {
    private struct State {
        var events: [StoredEvent] = []
        /// A hop to the manager to schedule a write is on its way (`claimWriteRequest`).
        var writeRequested = false
    }

    private let state = NIOLockedValueBox(State())

    func append(_ event: StoredEvent) {
        state.withLockedValue { $0.events.append(event) }
    }

    func drain() -> [StoredEvent] {
        state.withLockedValue { state in
            defer { state.events = [] }
            return state.events
        }
    }

    /// Puts back events whose write failed, ahead of any emitted since.
    func restore(_ events: [StoredEvent]) {
        guard !events.isEmpty else { return }
        state.withLockedValue { $0.events.insert(contentsOf: events, at: 0) }
    }

    var isEmpty: Bool { state.withLockedValue { $0.events.isEmpty } }

    /// Whether the caller, having appended an event off the manager (a transfer that
    /// started), must ask the manager to schedule a write: true for the first such event
    /// since the manager last took the request (`takeWriteRequest`), false while a request is
    /// on its way, since that request's write takes every event appended before it arrives.
    ///
    /// Why: every transfer of a daemon's batch reports a `started` event from its worker, and
    /// a task and an actor hop for each of 5,000 small files were work for nothing.
    func claimWriteRequest() -> Bool {
        state.withLockedValue { state in
            guard !state.writeRequested else { return false }
            state.writeRequested = true
            return true
        }
    }

    /// The manager took the write request: an event appended from now on claims a new one.
    /// Called before the manager looks at what is pending, so that nothing appended in
    /// between is left without a write.
    func takeWriteRequest() {
        state.withLockedValue { $0.writeRequested = false }
    }
}
