import Foundation

/// A session whose downloads live in `haul daemon`, not in this process: they go on when the
/// process is suspended, crashes or is killed, and a process that comes back re-attaches by the
/// same `identifier`, finds its downloads and receives every event it missed.
///
/// The same shape as `DownloadManager` (add downloads and groups, list, pause, resume, cancel,
/// remove, events, a group's summary), over the daemon's `haul.*` JSON-RPC methods.
///
/// Events: `events()` replays every event the daemon kept for this session and that was not
/// acknowledged, in order, then yields `.didFinishEvents` once, then goes on with new events
/// as they happen (and live progress). Call `acknowledge(through:)` when an event has been
/// handled; until then a session re-attached later gets it again (at least once).
public actor BackgroundSession {
    public struct Configuration: Sendable {
        /// Where the daemon listens (by default its unix socket).
        public var endpoint: DaemonEndpoint
        /// Needed over TCP only.
        public var secret: String?
        /// The session's limits and group order, kept by the daemon for the session.
        public var settings: SessionSettings
        /// Start a daemon when none answers, as the system starts its transfer daemon on
        /// demand. On by default; it needs a unix-socket endpoint.
        public var startsDaemon: Bool
        /// The `haul` executable that starts the daemon: by default `$HAUL_EXECUTABLE`, else
        /// `haul` found on `PATH`.
        public var daemonExecutable: String?
        /// The state directory of a daemon started on demand (its default otherwise).
        public var daemonStateDirectory: URL?
        /// How long one event poll waits at the daemon for something new.
        public var eventPollWait: Duration

        public init(
            endpoint: DaemonEndpoint = .unixSocket(path: DaemonEndpoint.defaultSocketPath),
            secret: String? = nil,
            settings: SessionSettings = SessionSettings(),
            startsDaemon: Bool = true,
            daemonExecutable: String? = nil,
            daemonStateDirectory: URL? = nil,
            eventPollWait: Duration = .seconds(20)
        ) {
            self.endpoint = endpoint
            self.secret = secret
            self.settings = settings
            self.startsDaemon = startsDaemon
            self.daemonExecutable = daemonExecutable
            self.daemonStateDirectory = daemonStateDirectory
            self.eventPollWait = eventPollWait
        }
    }

    /// What `events()` yields.
    public enum Event: Sendable, Hashable {
        /// A kept event (started, paused, completed, failed, canceled, group completed, ...).
        case event(SessionEvent)
        /// Every event kept while this client was away has been delivered (once per stream).
        case didFinishEvents
        /// The latest progress of a running download; never replayed.
        case progress(DownloadID, TransferProgress)
    }

    public nonisolated let identifier: String
    public nonisolated let configuration: Configuration
    private let client: RPCClient

    /// Attaches to the session `identifier` in the daemon (starting a daemon if allowed and
    /// none answers) and applies `configuration.settings` to it.
    public init(identifier: String, configuration: Configuration = Configuration()) async throws(HaulError) {
        self.identifier = identifier
        self.configuration = configuration
        let pollTimeout = configuration.eventPollWait + .seconds(30)
        self.client = RPCClient(
            endpoint: configuration.endpoint, secret: configuration.secret,
            configuration: RPCClient.Configuration(timeout: pollTimeout))
        do {
            try await attach()
        } catch {
            await client.shutdown()
            throw error
        }
    }

    private func attach() async throws(HaulError) {
        do {
            _ = try await client.call("haul.attach", identifier, configuration.settings, returning: [RemoteDownload].self)
            return
        } catch where error.code == .daemonUnavailable && configuration.startsDaemon {
            try startDaemon()
        }
        // The daemon takes a moment to open its store and listen: ask again, backing off.
        var delay = Duration.milliseconds(20)
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                _ = try await client.call("haul.attach", identifier, configuration.settings, returning: [RemoteDownload].self)
                return
            } catch where error.code == .daemonUnavailable && ContinuousClock.now < deadline {
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .milliseconds(500))
            }
        }
    }

    private func startDaemon() throws(HaulError) {
        guard case .unixSocket(let socket) = configuration.endpoint else {
            throw HaulError(.daemonUnavailable, "no haul daemon answers at \(configuration.endpoint), and one is started only for a unix socket")
        }
        guard let executable = configuration.daemonExecutable ?? Self.findExecutable() else {
            throw HaulError(.daemonUnavailable, "no haul daemon is running, and no `haul` executable was found to start one (set HAUL_EXECUTABLE or put haul on PATH)")
        }
        var arguments = ["daemon", "--socket", socket, "--no-tcp"]
        if let state = configuration.daemonStateDirectory { arguments += ["--state-dir", state.path] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // The daemon outlives this process: it must not hold our pipes or terminal.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw HaulError(.daemonUnavailable, "could not start \(executable) daemon: \(error.localizedDescription)")
        }
    }

    private static func findExecutable() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["HAUL_EXECUTABLE"], !configured.isEmpty { return configured }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/haul"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Closes the connection to the daemon. The session's downloads go on in the daemon.
    public func close() async {
        await client.shutdown()
    }

    // MARK: Adding

    @discardableResult
    public func add(_ request: DownloadRequest) async throws(HaulError) -> DownloadID {
        try await client.call("haul.add", identifier, request.normalized)
    }

    /// Adds every request as one group in one call; the daemon schedules them without any
    /// round trip to this process. Returns their IDs in the order of `requests`.
    @discardableResult
    public func add(_ requests: [DownloadRequest], toGroup name: String) async throws(HaulError) -> [DownloadID] {
        try await client.call("haul.addGroup", identifier, name, requests.map(\.normalized))
    }

    // MARK: Queries

    /// The session's downloads, in the order they were added.
    public func downloads() async throws(HaulError) -> [DownloadInfo] {
        try await client.call("haul.list", identifier, returning: [RemoteDownload].self).map(\.info)
    }

    public func info(_ id: DownloadID) async throws(HaulError) -> DownloadInfo {
        try await client.call("haul.status", identifier, id.description, returning: RemoteDownload.self).info
    }

    /// The group's members by outcome now.
    public func summary(ofGroup name: String) async throws(HaulError) -> GroupSummary {
        try await client.call("haul.group", identifier, name, returning: RemoteGroupSummary.self).summary
    }

    // MARK: Control

    public func pause(_ id: DownloadID) async throws(HaulError) {
        let _: String = try await client.call("haul.pause", identifier, id.description)
    }

    public func resume(_ id: DownloadID) async throws(HaulError) {
        let _: String = try await client.call("haul.resume", identifier, id.description)
    }

    public func cancel(_ id: DownloadID) async throws(HaulError) {
        let _: String = try await client.call("haul.cancel", identifier, id.description)
    }

    public func remove(_ id: DownloadID, deletingFile: Bool = false) async throws(HaulError) {
        let _: String = try await client.call("haul.remove", identifier, id.description, deletingFile)
    }

    /// Gives the session up deliberately (the "force quit"): running downloads stop with their
    /// bytes and resume state kept, queued ones are canceled, paused ones stay paused.
    public func invalidateAndCancel() async throws(HaulError) {
        let _: String = try await client.call("haul.invalidateAndCancel", identifier)
    }

    // MARK: Events

    /// Deletes the kept events up to and including `sequence`: they were handled.
    public func acknowledge(through sequence: Int64) async throws(HaulError) {
        let _: String = try await client.call("haul.acknowledge", identifier, sequence)
    }

    /// The next kept events after `sequence` and the progress of running downloads; when
    /// there are none yet, waits up to `configuration.eventPollWait` (unless `waiting` is false).
    public func poll(after sequence: Int64, waiting: Bool = true, limit: Int = 1000) async throws(HaulError) -> RemoteEventBatch {
        let wait = waiting ? Int(configuration.eventPollWait.components.seconds * 1000) : 0
        return try await client.call("haul.events", identifier, sequence, wait, limit)
    }

    /// Every kept, unacknowledged event in order, then `.didFinishEvents`, then new events
    /// as they come. The stream ends with an error if the daemon cannot be reached.
    public nonisolated func events() -> AsyncThrowingStream<Event, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var cursor: Int64 = 0
                var caughtUp = false
                do {
                    while !Task.isCancelled {
                        // Until caught up, ask without waiting: an empty answer means done.
                        let batch = try await self.poll(after: cursor, waiting: caughtUp)
                        for event in batch.events {
                            continuation.yield(.event(event))
                            cursor = max(cursor, event.sequence)
                        }
                        if !caughtUp, batch.events.isEmpty {
                            caughtUp = true
                            continuation.yield(.didFinishEvents)
                        }
                        if caughtUp {
                            for item in batch.progress { continuation.yield(.progress(item.id, item.progress)) }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
