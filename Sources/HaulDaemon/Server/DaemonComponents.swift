import ServiceLifecycle

/// The parts a daemon runs, as built by its composition from a `DaemonContext`.
package struct DaemonComponents: Sendable {
    /// Answers every JSON-RPC request, from either transport.
    package var handler: any RPCRequestHandler
    /// Services that run beside the servers (a session host, timers). They are started before
    /// the servers and stopped after them, so no request reaches a stopped session.
    package var services: [any Service]
    /// Runs once the servers have stopped (after SIGTERM, SIGINT or a requested shutdown, and
    /// also when the daemon fails to start listening): the place to shut the sessions down so
    /// that every transfer is checkpointed. The daemon exits when it returns.
    package var onShutdown: @Sendable () async -> Void

    package init(
        handler: any RPCRequestHandler,
        services: [any Service] = [],
        onShutdown: @escaping @Sendable () async -> Void = {}
    ) {
        self.handler = handler
        self.services = services
        self.onShutdown = onShutdown
    }
}
