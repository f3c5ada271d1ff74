import Foundation
import Haul
import Logging
import ServiceLifecycle

/// `haul daemon`: the servers (JSON-RPC over HTTP and WebSocket, on a unix socket and on TCP)
/// and the parts its composition supplies (the RPC handler, a session host), run as one
/// ServiceLifecycle group until SIGTERM, SIGINT or a requested shutdown (all three take the same
/// graceful path, through `control`).
///
/// `run` in order:
/// 1. prepares the socket's directory (0700) and the state directory;
/// 2. takes the lock in the state directory, then the one beside the socket, so that a second
///    daemon on either refuses to start (`DaemonError.alreadyRunning`, naming the holder's PID);
/// 3. removes a stale socket a crashed daemon left (safe: the lock proves no daemon listens);
/// 4. asks the composition for its components, giving it a `DaemonContext`;
/// 5. runs them with the listeners; reports `onReady` once every listener accepts (the socket
///    narrowed to 0600);
/// 6. on shutdown, stops the listeners first (they finish the requests in flight and close the
///    WebSockets), then the component services, then calls `onShutdown`, removes the socket and
///    releases the locks.
///
/// A `Daemon` runs once.
package struct Daemon: Sendable {
    package let configuration: DaemonConfiguration
    /// Stops the running daemon gracefully; the same value is in every `DaemonContext`.
    package let control: DaemonControl
    private let compose: @Sendable (DaemonContext) async throws -> DaemonComponents
    private let logger: Logger

    /// A daemon whose parts `compose` builds once its locks are held.
    package init(
        configuration: DaemonConfiguration,
        logger: Logger = Logger(label: "haul.daemon"),
        compose: @escaping @Sendable (DaemonContext) async throws -> DaemonComponents
    ) {
        self.configuration = configuration
        self.logger = logger
        self.compose = compose
        self.control = DaemonControl()
    }

    /// A daemon with only a handler (and a shutdown hook).
    package init(
        configuration: DaemonConfiguration,
        logger: Logger = Logger(label: "haul.daemon"),
        makeHandler: @escaping @Sendable (DaemonContext) async throws -> any RPCRequestHandler,
        onShutdown: @escaping @Sendable () async -> Void = {}
    ) {
        self.init(configuration: configuration, logger: logger) { context in
            DaemonComponents(handler: try await makeHandler(context), onShutdown: onShutdown)
        }
    }

    /// Runs the daemon until it is shut down. Throws `DaemonError` when it cannot start
    /// (another daemon holds a lock, a listener cannot bind), or what the composition threw.
    ///
    /// - Parameter onReady: called once, when every listener accepts connections.
    package func run(onReady: @escaping @Sendable (DaemonAddresses) async -> Void = { _ in }) async throws {
        let signals = configuration.handlesTerminationSignals ? TerminationSignalWatcher(control: control) : nil
        defer { signals?.stop() }
        let socket = SocketLocation(path: configuration.resolvedSocketPath)
        let defaultDirectory = DaemonEndpoint.defaultRuntimeDirectory(
            environment: ProcessInfo.processInfo.environment, userID: DaemonSystemCalls.userID)
        try socket.prepare(isDefaultRuntimeDirectory: socket.directory == defaultDirectory)
        try createStateDirectory()
        let stateLock = try DaemonLock.acquire(
            at: configuration.stateLockPath, guarding: "the state directory \(configuration.stateDirectory.path)")
        defer { stateLock.release() }
        let socketLock = try DaemonLock.acquire(at: socket.lockPath, guarding: "the socket \(socket.path)")
        defer { socketLock.release() }
        try socket.removeStaleSocket(logger: logger)

        let registry = WebSocketRegistry()
        let metrics = DaemonMetrics()
        let context = DaemonContext(
            configuration: configuration, socketPath: socket.path, control: control,
            notifications: registry, logger: logger, metrics: metrics)
        let components = try await compose(context)
        var listeners: Set<DaemonReadiness.Listener> = [.unixSocket]
        if configuration.tcp != nil { listeners.insert(.tcp) }
        let readiness = DaemonReadiness(socketPath: socket.path, listeners: listeners, onReady: onReady)
        do {
            try await serve(components, socket: socket, registry: registry, metrics: metrics, readiness: readiness)
        } catch {
            await finish(components, socket: socket, readiness: readiness)
            throw error
        }
        await finish(components, socket: socket, readiness: readiness)
    }

    /// Runs the group until shutdown. Services stop in reverse order, so the listeners (last)
    /// stop first and the shutdown-request service (first) last.
    private func serve(
        _ components: DaemonComponents, socket: SocketLocation, registry: WebSocketRegistry, metrics: DaemonMetrics,
        readiness: DaemonReadiness
    ) async throws {
        let router = RPCRouter(handler: components.handler, registry: registry, metrics: metrics, configuration: configuration)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: control.shutdownRequestService, successTerminationBehavior: .gracefullyShutdownGroup)
        ]
        services += components.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        var addresses: [RPCListenerService.Address] = [.unixSocket(socket)]
        if let tcp = configuration.tcp { addresses.append(.tcp(tcp)) }
        for address in addresses {
            let listener = RPCListenerService(
                address: address, router: router, configuration: configuration, readiness: readiness, logger: logger)
            services.append(.init(
                service: listener, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        // SIGTERM and SIGINT arrive through `control` (see TerminationSignalWatcher).
        var group = ServiceGroupConfiguration(services: services, logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        try await ServiceGroup(configuration: group).run()
    }

    /// After the group: the composition's hook (checkpoint the sessions), then the socket.
    private func finish(_ components: DaemonComponents, socket: SocketLocation, readiness: DaemonReadiness) async {
        await components.onShutdown()
        socket.removeSocket(boundAs: await readiness.socketIdentity, logger: logger)
    }

    /// The state directory, created readable by this user only: the store holds URLs and
    /// request headers, which may carry credentials.
    private func createStateDirectory() throws(DaemonError) {
        do {
            try FileManager.default.createDirectory(
                at: configuration.stateDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw DaemonError(.fileSystem, "cannot create the state directory \(configuration.stateDirectory.path): \(error.localizedDescription)")
        }
    }
}
