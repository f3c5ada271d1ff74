import Foundation

/// The session's event outbox (with `Configuration.keepsEventOutbox`): events are kept in the
/// store, in order, until the client acknowledges them, so a client that was away (suspended,
/// crashed, killed) gets every event it missed, at least once.
extension DownloadManager {
    /// The kept events after `sequence`, oldest first, at most `limit`. With `timeout`, waits
    /// up to that long for new events when there are none yet (a long poll).
    package func storedEvents(after sequence: Int64, limit: Int = 1000, waitingUpTo timeout: Duration? = nil) async throws(HaulError) -> [StoredEvent] {
        try await storedEventTexts(after: sequence, limit: limit, waitingUpTo: timeout).decoded()
    }

    /// As `storedEvents`, the events as the store keeps them: JSON texts, for a caller that
    /// sends them on (the daemon's `haul.events`).
    ///
    /// On a store other daemons share (PostgreSQL), events they append wake the wait through
    /// the store's notifications (`StoreChangeFeed`), and the wait reads the store again every
    /// `fallbackPollInterval` in case a notification was lost.
    package func storedEventTexts(after sequence: Int64, limit: Int = 1000, waitingUpTo timeout: Duration? = nil) async throws(HaulError) -> [StoredEventText] {
        guard outbox != nil else {
            throw HaulError(.invalidRequest, "this manager keeps no event outbox (Configuration.keepsEventOutbox)")
        }
        guard let feed = store.changes else {
            // One process writes this store: its own writes wake the wait.
            if outbox?.isEmpty == false { await flushDirty() }
            let events = try await store.eventTexts(session: session, after: sequence, limit: max(1, limit))
            guard events.isEmpty, let timeout, timeout > .zero, !isShutDown else { return events }
            await waitForStoredEvents(timeout: timeout, feed: nil, generation: 0)
            if outbox?.isEmpty == false { await flushDirty() }
            return try await store.eventTexts(session: session, after: sequence, limit: max(1, limit))
        }
        // A shared store: the deadline is real time, since other processes write it.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout ?? .zero)
        while true {
            // Taken before reading: a notification after it makes the wait below return at once.
            let generation = feed.generation(of: session)
            if outbox?.isEmpty == false { await flushDirty() }
            let events = try await store.eventTexts(session: session, after: sequence, limit: max(1, limit))
            let remaining = clock.now.duration(to: deadline)
            guard events.isEmpty, remaining > .zero, !isShutDown else { return events }
            await waitForStoredEvents(timeout: min(remaining, feed.fallbackPollInterval), feed: feed, generation: generation)
        }
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

    /// Returns after the next write of this manager that stores events, the next change to
    /// the session's outbox `feed` reports after `generation`, `timeout`, or shutdown.
    func waitForStoredEvents(timeout: Duration, feed: StoreChangeFeed?, generation: UInt64) async {
        let key = UUID()
        var observer: Int?
        if let feed {
            observer = feed.observeEvents(of: session, unchangedSince: generation) { [weak self] in
                Task { await self?.wakeOutboxWaiter(key) }
            }
            // Changed since the read: read again rather than wait.
            guard observer != nil else { return }
        }
        let clock = configuration.clock
        let timer = Task {
            try? await clock.sleep(for: timeout)
            self.wakeOutboxWaiter(key)
        }
        await withCheckedContinuation { continuation in
            outboxWaiters[key] = continuation
        }
        timer.cancel()
        if let feed, let observer { feed.stopObserving(observer) }
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
