import Foundation
import Haul

/// How a daemon is set up: where it listens, where its state lives, and its limits. Each
/// property's doc comment states its default.
package struct DaemonConfiguration: Sendable {
    /// The TCP listener for clients that cannot use the socket (aria2 front-ends, browsers).
    package struct TCPListener: Sendable, Hashable {
        /// The address to listen on. Default: `127.0.0.1`, so that only this machine can
        /// connect; listening on other addresses (`0.0.0.0`) is for when it is asked for.
        package var host: String
        /// The port. Default: 6800, aria2's. 0 picks a free port (reported when ready).
        package var port: Int

        package init(host: String = "127.0.0.1", port: Int = DaemonEndpoint.defaultTCPPort) {
            self.host = host
            self.port = port
        }

        /// Every IPv4 address of the machine (aria2's `--rpc-listen-all`).
        package static func allAddresses(port: Int = DaemonEndpoint.defaultTCPPort) -> TCPListener {
            TCPListener(host: "0.0.0.0", port: port)
        }
    }

    /// The unix socket. Default: nil, meaning `DaemonEndpoint.defaultSocketPath`
    /// (`$XDG_RUNTIME_DIR/haul/haul.sock`, else `/tmp/haul-UID/haul.sock`).
    package var socketPath: String?
    /// Where the durable store (and the lock that keeps a second daemon away) lives.
    /// Default: `DownloadManager.defaultStateDirectory` (`$XDG_STATE_HOME/haul`).
    package var stateDirectory: URL
    /// The TCP listener, or nil for none. Default: `127.0.0.1:6800`.
    package var tcp: TCPListener?
    /// The secret TCP clients must send (`"token:SECRET"`); for the RPC layer, which
    /// generates and stores one when this is nil. Default: nil.
    package var rpcSecret: String?
    /// Which browser pages of other origins may call `/jsonrpc` (`--rpc-allow-origin-all`,
    /// `--rpc-allow-origin`). Default: none; the daemon's own dashboard is always allowed.
    package var allowedOrigins: RPCOriginPolicy
    /// The downloads fetching at once, for the session host; nil leaves its own default.
    /// Default: nil.
    package var maxConcurrentDownloads: Int?
    /// The largest request accepted: an HTTP body longer than this is refused with 413
    /// without being read, a WebSocket message longer than this closes the connection
    /// (status 1009). Default: 2 MiB.
    package var maxRequestBytes: Int
    /// How many messages (answers and notifications) may wait for one WebSocket client
    /// before it counts as too slow and is disconnected, so that it cannot hold up the others
    /// or fill the daemon's memory. Default: 1024.
    package var webSocketBacklogLimit: Int
    /// Whether SIGTERM and SIGINT shut the daemon down gracefully. Default: true; tests that
    /// run a daemon inside the test process turn it off.
    package var handlesTerminationSignals: Bool
    /// How long the servers may take to stop (finish requests, close WebSockets) before they
    /// are cancelled; the shutdown hook runs after that either way. Default: 15 seconds.
    package var shutdownTimeout: Duration
    /// How many TCP connections are kept open, in all and per peer (see `ConnectionLimits`).
    /// Default: `ConnectionLimits()`.
    package var tcpConnections = ConnectionLimits()
    /// How long an HTTP connection may stay silent, between requests or before its first one
    /// is complete, before it is closed. Default: 30 seconds.
    package var idleTimeout: Duration = .seconds(30)

    package init(
        socketPath: String? = nil,
        stateDirectory: URL = DownloadManager.defaultStateDirectory,
        tcp: TCPListener? = TCPListener(),
        rpcSecret: String? = nil,
        allowedOrigins: RPCOriginPolicy = RPCOriginPolicy(),
        maxConcurrentDownloads: Int? = nil,
        maxRequestBytes: Int = 2 * 1024 * 1024,
        webSocketBacklogLimit: Int = 1024,
        handlesTerminationSignals: Bool = true,
        shutdownTimeout: Duration = .seconds(15)
    ) {
        self.socketPath = socketPath
        self.stateDirectory = stateDirectory
        self.tcp = tcp
        self.rpcSecret = rpcSecret
        self.allowedOrigins = allowedOrigins
        self.maxConcurrentDownloads = maxConcurrentDownloads
        self.maxRequestBytes = maxRequestBytes
        self.webSocketBacklogLimit = webSocketBacklogLimit
        self.handlesTerminationSignals = handlesTerminationSignals
        self.shutdownTimeout = shutdownTimeout
    }

    /// The socket path in effect.
    package var resolvedSocketPath: String { socketPath ?? DaemonEndpoint.defaultSocketPath }

    /// The lock file in the state directory.
    var stateLockPath: String { stateDirectory.appendingPathComponent("daemon.lock").path }
}
