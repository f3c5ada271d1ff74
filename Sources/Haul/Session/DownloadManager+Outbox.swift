import Foundation

/// The session's event outbox (with `Configuration.keepsEventOutbox`): events are kept in the
/// store, in order, until the client acknowledges them, so a client that was away (suspended,
/// crashed, killed) gets every event it missed, at least once.
extension DownloadManager {
    /// The kept events after `sequence`, oldest first, at most `limit`. With `timeout`, waits
    /// up to that long for new events when there are none yet (a long poll).
    package func storedEvents(after sequence: Int64, limit: Int = 1000, waitingUpTo timeout: Duration? = nil) async throws(HaulError) -> [StoredEvent] {
        guard outbox != nil else {
            throw HaulError(.invalidRequest, "this manager keeps no event outbox (Configuration.keepsEventOutbox)")
        }
        // Events emitted but not yet written are written now, not after the batching delay.
        if outbox?.isEmpty == false { await flushDirty() }
        let events = try await store.events(session: session, after: sequence, limit: max(1, limit))
        guard events.isEmpty, let timeout, timeout > .zero, !isShutDown else { return events }
        await waitForStoredEvents(timeout: timeout)
        if outbox?.isEmpty == false { await flushDirty() }
        return try await store.events(session: session, after: sequence, limit: max(1, limit))
    }

    /// The client has handled every event up to and including `sequence`: they are deleted.
    package func acknowledgeEvents(through sequence: Int64) async throws(HaulError) {
        let acknowledged = pins.isEmpty ? OutboxPins() : try await store.outboxPins(session: session, through: sequence)
        try await store.acknowledgeEvents(session: session, through: sequence)
        unpin(acknowledged)
    }

    /// Keeps `settings` with the session, for a daemon that continues it after a restart.
    package func saveSettings(_ settings: SessionSettings) async throws(HaulError) {
        try await store.saveSettings(settings, session: session)
    }

    /// Every session kept in the store at `stateDirectory`, with the settings it saved.
    package static func storedSessions(stateDirectory: URL) async throws(HaulError) -> [(id: String, settings: SessionSettings?)] {
        try await storedSessions(store: .directory(stateDirectory))
    }

    /// Every session kept in the store at `location`, with the settings it saved.
    package static func storedSessions(
        store location: StoreLocation, waitingUpTo wait: Duration = .zero
    ) async throws(HaulError) -> [(id: String, settings: SessionSettings?)] {
        try await location.open(waitingUpTo: wait).sessions()
    }

    /// Returns after the next write that stores events, after `timeout`, or at shutdown.
    private func waitForStoredEvents(timeout: Duration) async {
        let key = UUID()
        let clock = configuration.clock
        let timer = Task {
            try? await clock.sleep(for: timeout)
            self.wakeOutboxWaiter(key)
        }
        await withCheckedContinuation { continuation in
            outboxWaiters[key] = continuation
        }
        timer.cancel()
    }

    private func wakeOutboxWaiter(_ key: UUID) {
        outboxWaiters.removeValue(forKey: key)?.resume()
    }

    func wakeOutboxWaiters() {
        let waiters = outboxWaiters
        outboxWaiters = [:]
        for waiter in waiters.values { waiter.resume() }
    }
}
