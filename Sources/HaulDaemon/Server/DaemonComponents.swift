import ServiceLifecycle

/// The parts a daemon runs, as built by its composition from a `DaemonContext`.
public struct DaemonComponents: Sendable {
    /// Answers every JSON-RPC request, from either transport.
    public var handler: any RPCRequestHandler
    /// Services that run beside the servers (a session host, timers). They are started before
    /// the servers and stopped after them, so no request reaches a stopped session.
    public var services: [any Service]
    /// Runs once the servers have stopped (after SIGTERM, SIGINT or a requested shutdown, and
    /// also when the daemon fails to start listening): the place to shut the sessions down so
    /// that every transfer is checkpointed. The daemon exits when it returns.
    public var onShutdown: @Sendable () async -> Void

    public init(
        handler: any RPCRequestHandler,
        services: [any Service] = [],
        onShutdown: @escaping @Sendable () async -> Void = {}
    ) {
        self.handler = handler
        self.services = services
        self.onShutdown = onShutdown
    }
}
