import Haul

/// What a failed call to the daemon means to the person at the terminal, and the exit status
/// scripts see: no daemon (12), the daemon refused the request (13), anything else by the
/// library's table.
extension CommandFailure {
    /// The daemon's answer to a wrong or missing secret, word for word (aria2's).
    static let unauthorizedMessage = "Unauthorized"

    init(daemon error: HaulError, endpoint: DaemonEndpoint) {
        switch error.code {
        case .daemonUnavailable:
            self.init(.daemonUnavailable, "no haul daemon at \(endpoint); start one with `\(Self.startCommand(for: endpoint))`")
        case .timeout:
            self.init(.daemonUnavailable, "the haul daemon at \(endpoint) did not answer in time")
        case .rpcError where error.message.contains(Self.unauthorizedMessage) && endpoint.requiresSecret:
            self.init(.daemonRefused, """
                the haul daemon at \(endpoint) refused the secret; pass --secret SECRET or set \
                \(DaemonConnectionOptions.secretVariable) (the daemon keeps it in the file rpc-secret in its state directory)
                """)
        case .rpcError:
            self.init(.daemonRefused, error.message)
        default:
            self.init(error)
        }
    }

    /// The command that starts a daemon where the client looked: `haul daemon`, with
    /// `--socket` when the client was given a socket other than the default.
    static func startCommand(for endpoint: DaemonEndpoint) -> String {
        switch endpoint {
        case .unixSocket(let path) where path != DaemonEndpoint.defaultSocketPath:
            return "haul daemon --socket \(path)"
        case .url(let url):
            guard let port = url.port, port != DaemonEndpoint.defaultTCPPort else { return "haul daemon" }
            return "haul daemon --rpc-listen-port \(port)"
        case .unixSocket:
            return "haul daemon"
        }
    }
}
