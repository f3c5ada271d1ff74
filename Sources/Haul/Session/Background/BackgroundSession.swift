import Foundation
import Logging

/// A session whose downloads live in `haul daemon`, not in this process: they go on when the
/// process is suspended, crashes or is killed, and a process that comes back re-attaches by
/// the same `identifier`, finds its downloads and receives every event it missed.
///
/// The same API as `DownloadManager` (`DownloadSession`), over the daemon's `haul.*` JSON-RPC
/// methods: code written for one runs on the other.
///
/// Events: `events()` replays every event the daemon kept for this session that was not
/// acknowledged, in order, then yields `.didFinishEvents`, then goes on with new events as
/// they happen (and live progress). Call `acknowledge(_:)` once an event is handled; until
/// then a session attached later gets it again (at least once). The daemon keeps a finished
/// download, and its group, until the app acknowledged its events: lists, handles and group
/// summaries answer for it until then.
///
/// The connection survives the daemon: when it stops answering, the session waits for it to
/// come back (starting it again with `Configuration.startsDaemon`), attaches again, and its
/// event streams continue after the last event they delivered.
public actor BackgroundSession: SessionBackend {
    /// How to reach the daemon and how the session's downloads are scheduled there.
    public struct Configuration: Sendable {
        /// Where the daemon listens. Default: its unix socket (`DaemonEndpoint.defaultSocketPath`).
        public var endpoint: DaemonEndpoint
        /// The daemon's secret; needed over TCP only. Default nil.
        public var secret: String?
        /// The session's limits and group order, kept by the daemon for the session.
        /// Default: 4 downloads at once, groups interleaved.
        public var settings: SessionSettings
        /// Start a daemon when none answers (at attach, and whenever the connection is lost),
        /// as the system starts its transfer daemon on demand. Default true; it needs a
        /// unix-socket endpoint.
        public var startsDaemon: Bool
        /// The `haul` executable that starts the daemon: by default `$HAUL_EXECUTABLE`, else
        /// `haul` found on `PATH`.
        public var daemonExecutable: String?
        /// The state directory of a daemon started on demand (its default otherwise).
        public var daemonStateDirectory: URL?
        /// How long one event poll waits at the daemon for something new. Default 20 s.
        public var eventPollWait: Duration
        /// How often a download's progress is asked for while someone follows it
        /// (`Download.progress`). Default 500 ms.
        public var progressInterval: Duration
        /// How long the session waits for a daemon that stopped answering before its calls and
        /// streams give up with `.daemonUnavailable`. Default 60 s.
        public var reconnectTimeout: Duration
        /// Where the session logs what it decides (reconnecting, starting the daemon). Default:
        /// nowhere.
        public var logger: Logger

        /// A configuration; every default is stated on its property.
        public init(
            endpoint: DaemonEndpoint = .unixSocket(path: DaemonEndpoint.defaultSocketPath),
            secret: String? = nil,
            settings: SessionSettings = SessionSettings(),
            startsDaemon: Bool = true,
            daemonExecutable: String? = nil,
            daemonStateDirectory: URL? = nil,
            eventPollWait: Duration = .seconds(20),
            progressInterval: Duration = .milliseconds(500),
            reconnectTimeout: Duration = .seconds(60),
            logger: Logger = Logger(label: "haul", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.endpoint = endpoint
            self.secret = secret
            self.settings = settings
            self.startsDaemon = startsDaemon
            self.daemonExecutable = daemonExecutable
            self.daemonStateDirectory = daemonStateDirectory
            self.eventPollWait = eventPollWait
            self.progressInterval = progressInterval
            self.reconnectTimeout = reconnectTimeout
            self.logger = logger
        }
    }

    /// The session's name in the daemon.
    public nonisolated let identifier: String
    /// How the session reaches the daemon.
    public nonisolated let configuration: Configuration
    let client: RPCClient
    /// The reconnection under way, which every caller that lost the daemon joins.
    private var reconnecting: Task<Void, any Error>?

    /// Attaches to the session `identifier` in the daemon (starting a daemon if allowed and
    /// none answers) and applies `configuration.settings` to it. Throws `.daemonUnavailable`
    /// when no daemon answers within `reconnectTimeout`.
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

    /// Closes the connection to the daemon. The session's downloads go on in the daemon.
    public func close() async {
        reconnecting?.cancel()
        await client.shutdown()
    }

    // MARK: Attaching, and again after the daemon was lost

    private func attach() async throws(HaulError) {
        do {
            try await attachOnce()
        } catch where error.code == .daemonUnavailable {
            try await waitForDaemon()
        }
    }

    private func attachOnce() async throws(HaulError) {
        _ = try await client.call("haul.attach", identifier, configuration.settings, returning: [RemoteDownload].self)
    }

    /// Starts a daemon (when allowed) and asks again, backing off, until the session is
    /// attached or `reconnectTimeout` has passed.
    private func waitForDaemon() async throws(HaulError) {
        if configuration.startsDaemon {
            try startDaemon()
        }
        var delay = Duration.milliseconds(20)
        let deadline = ContinuousClock.now + configuration.reconnectTimeout
        while true {
            do {
                try await attachOnce()
                return
            } catch where error.code == .daemonUnavailable && ContinuousClock.now < deadline && !Task.isCancelled {
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .milliseconds(500))
            }
        }
    }

    /// The daemon stopped answering: waits until it answers again and the session is attached
    /// again. Concurrent callers share one reconnection.
    func reconnect() async throws(HaulError) {
        let task: Task<Void, any Error>
        if let reconnecting {
            task = reconnecting
        } else {
            configuration.logger.notice("the haul daemon stopped answering; reconnecting", metadata: ["haul.session": "\(identifier)"])
            task = Task { try await self.waitForDaemon() }
            reconnecting = task
        }
        do {
            try await task.value
        } catch {
            if reconnecting == task { reconnecting = nil }
            throw HaulError.from(error, fallback: .daemonUnavailable)
        }
        if reconnecting == task {
            reconnecting = nil
            configuration.logger.notice("attached again to the haul daemon", metadata: ["haul.session": "\(identifier)"])
        }
    }

    /// Calls `method`; when the daemon is lost, reconnects and calls once more, for calls
    /// that may be repeated (reads, waits, pause and resume).
    func call<Result: Decodable & Sendable>(
        _ method: String, _ parameters: any Encodable & Sendable..., returning: Result.Type = Result.self, retrying: Bool = true
    ) async throws(HaulError) -> Result {
        let encoded = parameters.map(RPCParameter.init)
        do {
            return try await client.call(method, encoded, returning: Result.self)
        } catch where error.code == .daemonUnavailable && retrying {
            try await reconnect()
            return try await client.call(method, encoded, returning: Result.self)
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
            throw HaulError(.daemonUnavailable, "could not start \(executable) daemon: \(error.localizedDescription)", underlying: error)
        }
        configuration.logger.notice("started a haul daemon", metadata: ["haul.session": "\(identifier)", "haul.socket": "\(socket)"])
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
}
