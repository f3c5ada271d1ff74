import Foundation
import Haul
import Logging
import ServiceLifecycle

/// Puts the daemon together once its locks are held: the session host on the store, aria2's
/// methods on the default session, the `haul.*` methods on every session, the secret, and
/// aria2's notifications to WebSocket clients.
package enum DaemonAssembly {
    package struct Options: Sendable {
        /// Where aria2 clients' downloads go unless they say otherwise (aria2's `dir`); their
        /// `dir` and `out` options may not leave it.
        package var downloadDirectory: URL
        /// More directories that `haul.*` calls over TCP may download into (`--allow-dir`),
        /// besides `downloadDirectory`. Default: none.
        package var allowedDirectories: [URL]
        /// Settings of sessions that never saved their own (the default session's among them).
        package var defaultSettings: SessionSettings
        /// Connections, segment size, speed limits and timeouts of every session.
        package var transfers: DaemonTransferOptions
        /// Stopped downloads aria2's session keeps (aria2's `--max-download-result`).
        package var maxDownloadResult: Int
        /// Retries and waiting of every session. Default `RetryPolicy.background`: a server or
        /// network that is gone is waited for, up to 7 days from when a download was added.
        package var retry = RetryPolicy.background
        /// Trusted CAs, certificate checks and client certificate of every session. Default:
        /// the system's CAs.
        package var tls = TLSSettings()
        /// The proxies of every session. Default: none. `haul daemon` sets its options and the
        /// environment's variables (`ProxySettings.fromEnvironment`), and refuses to start when
        /// one of them cannot be used, rather than reading them here where an unusable one
        /// could only be dropped (and its downloads sent out directly).
        package var proxy = ProxySettings.direct
        /// Where the sessions' downloads are kept. Default: nil, the state directory's SQLite
        /// file; `haul daemon --store postgresql://…` names a PostgreSQL database instead.
        package var store: StoreLocation?
        /// How long starting waits for a PostgreSQL server that does not answer. Default: 0.
        package var storeWait: Duration = .zero
        /// This daemon's place in the fleet of its PostgreSQL store (its ID, new at every start,
        /// owns its leases and its row in `haul.daemon`); nil with SQLite.
        package var fleet: FleetMembership?

        package init(
            downloadDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            allowedDirectories: [URL] = [],
            defaultSettings: SessionSettings = SessionSettings(), transfers: DaemonTransferOptions = DaemonTransferOptions(),
            maxDownloadResult: Int = 1_000
        ) {
            self.downloadDirectory = downloadDirectory
            self.allowedDirectories = allowedDirectories
            self.defaultSettings = defaultSettings
            self.transfers = transfers
            self.maxDownloadResult = maxDownloadResult
        }
    }

    /// Process-wide settings for a long-running daemon; call first thing in `main`.
    package static func prepareProcess() {
        DaemonSystemCalls.limitMallocArenas(2)
        // Idle connections must not exhaust the descriptors the daemon needs for its own work
        // (the TCP listener is capped below the limit, see ConnectionAdmission).
        DaemonSystemCalls.raiseOpenFileLimit()
    }

    package static func compose(_ context: DaemonContext, options: Options) async throws -> DaemonComponents {
        let confinement = try DirectoryConfinement(
            downloadDirectory: options.downloadDirectory, allowed: options.allowedDirectories)
        var settings = options.defaultSettings
        if let limit = context.configuration.maxConcurrentDownloads { settings.maxConcurrentDownloads = limit }
        // Downloads outlive their callers here: a server or network that is gone is waited for
        // (up to 7 days from when the download was added), as background URLSessions do.
        var managerConfiguration = DownloadManager.Configuration(retry: options.retry)
        managerConfiguration.tls = options.tls
        managerConfiguration.proxy = options.proxy
        // Every directory is resolved when its download is added (DirectoryConfinement,
        // Aria2DownloadDirectory): one swapped for a link later must not lead writes elsewhere.
        managerConfiguration.refusesLinksInDirectories = true
        // The daemon's own registry, served at /metrics: not the process's global factory.
        managerConfiguration.metricsFactory = context.metrics.factory
        managerConfiguration.fleet = options.fleet
        let overallLimit = SpeedLimiter(bytesPerSecond: options.transfers.maxOverallDownloadLimit)
        options.transfers.apply(to: &managerConfiguration, sharing: overallLimit)
        let host = SessionHost(configuration: SessionHost.Configuration(
            stateDirectory: context.configuration.stateDirectory, defaultSettings: settings, manager: managerConfiguration,
            maxDownloadResult: options.maxDownloadResult, store: options.store, storeWait: options.storeWait))
        try await host.start()
        // On PostgreSQL, a row in haul.daemon while this daemon runs: who is alive in the fleet.
        // A daemon whose row could not be written still serves; its next heartbeat tries again.
        let presence: PostgresDaemonPresence? = if let store = options.store {
            try? await PostgresDaemonPresence.start(
                store, fleetID: options.fleet?.owner ?? UUID().uuidString.lowercased(), waitingUpTo: options.storeWait)
        } else {
            nil
        }
        let defaultManager = try await host.manager(for: SessionHost.defaultSession)

        let control = context.control
        let aria2 = try Aria2Service(manager: defaultManager, configuration: Aria2Configuration(
            downloadDirectory: options.downloadDirectory, transfers: options.transfers,
            requestShutdown: { _ in control.requestShutdown() }))
        var methods = RPCMethodTable()
        aria2.register(in: &methods)
        HaulSessionMethods(host: host, confinement: confinement).register(in: &methods)
        DashboardSessionMethods(host: host).register(in: &methods)
        DashboardFleetMethods(presence: presence).register(in: &methods)

        let secretValue: String
        if let configured = context.configuration.rpcSecret {
            secretValue = configured
        } else {
            secretValue = try RPCSecretFile.loadOrCreate(in: context.configuration.stateDirectory).value
        }
        let handler = JSONRPCHandler(methods: methods, secret: try RPCSecret(secretValue))

        let notifications = Aria2Notifications(manager: defaultManager, sink: context.notifications)
        let forwarding = Task { await notifications.run() }
        return DaemonComponents(handler: handler, onShutdown: {
            await host.shutdown()
            await presence?.stop()
            forwarding.cancel()
        })
    }
}
