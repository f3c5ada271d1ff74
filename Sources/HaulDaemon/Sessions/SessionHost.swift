import Foundation
import Haul

/// The daemon's sessions: one `DownloadManager` per session identifier, all on one store.
///
/// Every session kept in the store is opened when the daemon starts, so that downloads go on
/// after a crash or reboot without waiting for their client to come back. A session's
/// manager keeps an event outbox, and its settings (limits, group order) are kept with it so
/// that a restarted daemon schedules it the same way.
package actor SessionHost {
    package struct Configuration: Sendable {
        package var stateDirectory: URL
        /// Where the sessions' downloads are kept: the state directory's SQLite file (the
        /// default), or a PostgreSQL database (`haul daemon --store postgresql://…`).
        package var store: StoreLocation
        /// How long the first open waits for a PostgreSQL server that does not answer yet.
        package var storeWait: Duration
        /// Used for sessions that never saved settings.
        package var defaultSettings: SessionSettings
        /// Everything else a session's manager is configured with.
        package var manager: DownloadManager.Configuration
        /// Finished downloads aria2's session keeps (aria2's `--max-download-result`, default
        /// 1,000); the other sessions keep `manager.retention`.
        package var maxDownloadResult: Int

        package init(
            stateDirectory: URL, defaultSettings: SessionSettings = SessionSettings(), manager: DownloadManager.Configuration = .init(),
            maxDownloadResult: Int = 1_000, store: StoreLocation? = nil, storeWait: Duration = .zero
        ) {
            self.stateDirectory = stateDirectory
            self.store = store ?? .directory(stateDirectory)
            self.storeWait = storeWait
            self.defaultSettings = defaultSettings
            self.manager = manager
            self.maxDownloadResult = maxDownloadResult
        }
    }

    /// The session that aria2's methods (which know no sessions) act on. Not "default", the
    /// session of `DownloadManager.open` without one, so the two never share downloads.
    package static let defaultSession = "daemon"

    package let configuration: Configuration
    private var managers: [String: DownloadManager] = [:]
    private var opening: [String: Task<DownloadManager, any Error>] = [:]
    private var isShutDown = false
    /// In a fleet: opens sessions other daemons created (`watchFleetSessions`).
    private var sessionWatch: Task<Void, Never>?
    /// In a fleet: wakes claim loops on `haul_queue` notifications (`watchQueueChanges`).
    private var queueWatch: Task<Void, Never>?
    /// Finishing steps of resources (HLS, Metalink) owed when their groups complete.
    let resources: ResourceSupervisor
    let resourceBook: ResourceBook

    package init(configuration: Configuration) {
        self.configuration = configuration
        resourceBook = ResourceBook(stateDirectory: configuration.stateDirectory)
        resources = ResourceSupervisor(book: resourceBook)
    }

    /// Opens every session the daemon kept (those with settings; sessions of `haul get` or of
    /// programs using `DownloadManager` in the same state directory are theirs, not the
    /// daemon's), which continues their interrupted downloads.
    package func start() async throws(HaulError) {
        let stored = try await DownloadManager.storedSessions(store: configuration.store, waitingUpTo: configuration.storeWait)
        for stored in stored {
            guard let settings = stored.settings else { continue }
            _ = try await manager(for: stored.id, settings: settings)
        }
        _ = try await manager(for: Self.defaultSession)
        if let fleet = configuration.manager.fleet {
            watchFleetSessions(every: fleet.claimInterval)
            if let changes = managers[Self.defaultSession]?.storeChanges { watchQueueChanges(changes) }
        }
    }

    /// In a fleet, work added or released through any daemon (a `haul_queue` notification)
    /// wakes the claim loop of its session at once; the claim poll stays as the fallback for
    /// notifications lost while the listening connection was down (those arrive as `nil`:
    /// every session). A pause or cancel asked through another daemon (`haul_control`) makes
    /// the session's manager read the requests for the downloads it holds at once.
    private func watchQueueChanges(_ changes: StoreChangeFeed) {
        guard queueWatch == nil else { return }
        let stream = changes.queueChanges()
        let controls = changes.controlRequests()
        queueWatch = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [weak self] in
                    for await session in stream {
                        guard let self else { return }
                        await self.fleetWake(session: session)
                    }
                }
                group.addTask { [weak self] in
                    for await session in controls {
                        guard let self else { return }
                        await self.controlRequested(session: session)
                    }
                }
            }
        }
    }

    /// The managers of `session` (every open one when nil) read the controls asked of their
    /// downloads now (`DownloadManager.fleetNotified`).
    private func controlRequested(session: String?) {
        guard configuration.manager.fleet != nil, !isShutDown else { return }
        for (name, manager) in managers where session == nil || name == session { manager.fleetNotified() }
    }

    /// In a fleet, sessions are created through any daemon: each daemon opens (and so claims
    /// the downloads of) every session with settings that appears in the store.
    private func watchFleetSessions(every interval: Duration) {
        guard sessionWatch == nil else { return }
        sessionWatch = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, await self.openNewSessions() else { return }
            }
        }
    }

    /// Makes the fleet's claim loops look for work now instead of at their next poll: those of
    /// `session` (every open session when nil). A session not open here yet is looked for in
    /// the store and opened. The entry point for `LISTEN/NOTIFY` wake-ups (`haul_queue`).
    package func fleetWake(session: String? = nil) {
        guard configuration.manager.fleet != nil, !isShutDown else { return }
        if let session {
            if let manager = managers[session] { return manager.fleetWake() }
            Task { _ = await self.openNewSessions() }
        } else {
            for manager in managers.values { manager.fleetWake() }
        }
    }

    /// Opens the stored sessions not open here yet; false once the host has shut down.
    private func openNewSessions() async -> Bool {
        guard !isShutDown else { return false }
        guard let stored = try? await DownloadManager.storedSessions(store: configuration.store) else { return true }
        for stored in stored where managers[stored.id] == nil && opening[stored.id] == nil && !isShutDown {
            guard let settings = stored.settings else { continue }
            _ = try? await manager(for: stored.id, settings: settings)
        }
        return !isShutDown
    }

    /// The session's manager, opened on first use. `settings`, when given, replace the
    /// session's saved ones from now on (and for the next start); changing them reopens the
    /// manager, which keeps every download (running ones continue from their checkpoint).
    package func manager(for session: String, settings: SessionSettings? = nil) async throws(HaulError) -> DownloadManager {
        guard !isShutDown else { throw HaulError(.shutdown, "the daemon is shutting down") }
        try Self.validate(session)
        if let open = managers[session] {
            let saved = settingsCache[session] ?? configuration.defaultSettings
            guard let settings, settings != saved else { return open }
            var sameButLimit = settings
            sameButLimit.maxConcurrentDownloads = saved.maxConcurrentDownloads
            if sameButLimit == saved {
                // Only the limit changed: applied live, nothing stops.
                try await open.setMaxConcurrentDownloads(max(1, settings.maxConcurrentDownloads))
                try await open.saveSettings(settings)
                settingsCache[session] = settings
                return open
            }
            // The aria2 methods and their notifications hold the daemon's own session: it is
            // never reopened under them.
            guard session != Self.defaultSession else {
                throw HaulError(.invalidRequest, "the settings of session '\(session)' other than its limit cannot be changed while the daemon runs")
            }
            managers[session] = nil
            await open.shutdown()
            return try await openManager(session, settings: settings)
        }
        if let pending = opening[session] {
            do { return try await pending.value } catch { throw Self.haulError(error) }
        }
        return try await openManager(session, settings: settings)
    }

    /// The sessions open now.
    package var sessionNames: [String] { managers.keys.sorted() }

    /// Stops every transfer with its bytes and checkpoint kept; queued and paused downloads
    /// stay as they are, for the next start.
    package func shutdown() async {
        isShutDown = true
        sessionWatch?.cancel()
        queueWatch?.cancel()
        await resources.stop()
        let all = managers.values
        managers = [:]
        await withTaskGroup(of: Void.self) { group in
            for manager in all { group.addTask { await manager.shutdown() } }
        }
    }

    private var settingsCache: [String: SessionSettings] = [:]

    private func openManager(_ session: String, settings: SessionSettings?) async throws(HaulError) -> DownloadManager {
        let effective = settings ?? settingsCache[session] ?? configuration.defaultSettings
        var managerConfiguration = configuration.manager
        managerConfiguration.maxConcurrentDownloads = effective.maxConcurrentDownloads
        managerConfiguration.maxDownloadsPerHost = effective.maxDownloadsPerHost
        managerConfiguration.groupOrder = effective.groupOrder
        // aria2's clients never acknowledge events (they get notifications while connected):
        // its session keeps no outbox, and aria2's bound on stopped results.
        let isAria2Session = session == Self.defaultSession
        managerConfiguration.keepsEventOutbox = !isAria2Session
        if isAria2Session { managerConfiguration.retention.maxFinished = max(0, configuration.maxDownloadResult) }
        let store = configuration.store
        let task = Task { () async throws -> DownloadManager in
            let manager = try await DownloadManager.open(store: store, session: session, configuration: managerConfiguration)
            // Events an earlier daemon kept for this session, which nobody will read.
            if isAria2Session { try await manager.acknowledgeEvents(through: .max) }
            // Saved every time: a session with settings is the daemon's, reopened at start.
            try await manager.saveSettings(effective)
            return manager
        }
        opening[session] = task
        defer { opening[session] = nil }
        do {
            let manager = try await task.value
            managers[session] = manager
            settingsCache[session] = effective
            // Resources of this session whose finishing step is owed (after a restart, or
            // a reopen that ended the watchers on the old manager).
            for entry in resourceBook.entries() where entry.session == session {
                await resources.supervise(entry, manager: manager)
            }
            return manager
        } catch {
            throw Self.haulError(error)
        }
    }

    /// Session identifiers are names chosen by apps ("com.example.sync"): printable, short.
    static func validate(_ session: String) throws(HaulError) {
        guard !session.isEmpty, session.utf8.count <= 200, !session.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true }) else {
            throw HaulError(.invalidRequest, "a session identifier is 1 to 200 printable characters")
        }
    }

    private static func haulError(_ error: any Error) -> HaulError {
        (error as? HaulError) ?? HaulError(.fileSystem, "could not open the session: \(error)")
    }
}
