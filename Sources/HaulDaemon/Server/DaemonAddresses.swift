import Haul

/// Where a running daemon listens, once it does: what the ready line prints and what tests use
/// to connect (the TCP port is the one actually bound, also when 0 was asked for).
package struct DaemonAddresses: Sendable, Hashable {
    /// The unix socket's path.
    package let socketPath: String
    /// The TCP address, or nil when TCP is off.
    package let tcpHost: String?
    package let tcpPort: Int?

    /// The socket as a client endpoint.
    package var socketEndpoint: DaemonEndpoint { .unixSocket(path: socketPath) }

    /// The TCP listener as a client endpoint (loopback when listening on every address).
    package var tcpEndpoint: DaemonEndpoint? {
        guard let tcpHost, let tcpPort else { return nil }
        let reachable = tcpHost == "0.0.0.0" ? "127.0.0.1" : tcpHost == "::" ? "::1" : tcpHost
        return .tcp(host: reachable, port: tcpPort)
    }

    /// The line `haul daemon` prints on standard error when it is ready, e.g.
    /// `haul daemon: ready socket=/run/user/1000/haul/haul.sock tcp=127.0.0.1:6800 pid=4242`.
    package func readyLine(processID: Int32) -> String {
        let tcp = tcpHost.flatMap { host in tcpPort.map { "\(host):\($0)" } } ?? "off"
        return "haul daemon: ready socket=\(socketPath) tcp=\(tcp) pid=\(processID)"
    }
}
