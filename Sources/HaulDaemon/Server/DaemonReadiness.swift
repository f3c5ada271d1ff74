/// Collects the listeners' start-up reports and announces the daemon ready once every
/// listener is accepting connections (and the socket's mode is narrowed).
actor DaemonReadiness {
    enum Listener: Sendable, Hashable { case unixSocket, tcp }

    private let socketPath: String
    private var pending: Set<Listener>
    private var tcpAddress: (host: String, port: Int)?
    private var failures: [Listener: DaemonError] = [:]
    private let onReady: @Sendable (DaemonAddresses) async -> Void
    private(set) var socketIdentity: DaemonSystemCalls.PathStatus?

    init(socketPath: String, listeners: Set<Listener>, onReady: @escaping @Sendable (DaemonAddresses) async -> Void) {
        self.socketPath = socketPath
        self.pending = listeners
        self.onReady = onReady
    }

    func unixSocketStarted(identity: DaemonSystemCalls.PathStatus) async {
        socketIdentity = identity
        await started(.unixSocket)
    }

    func tcpStarted(host: String, port: Int) async {
        tcpAddress = (host, port)
        await started(.tcp)
    }

    /// A listener came up but could not be made ready; its service reports this as its error.
    func failed(_ listener: Listener, _ error: DaemonError) {
        failures[listener] = error
    }

    func failure(of listener: Listener) -> DaemonError? {
        failures[listener]
    }

    func hasStarted(_ listener: Listener) -> Bool {
        !pending.contains(listener) && failures[listener] == nil
    }

    private func started(_ listener: Listener) async {
        guard pending.remove(listener) != nil, pending.isEmpty else { return }
        await onReady(DaemonAddresses(socketPath: socketPath, tcpHost: tcpAddress?.host, tcpPort: tcpAddress?.port))
    }
}
