import NIOCore

/// What the server knows about the connection a JSON-RPC request arrived on. The RPC layer
/// uses it to decide whether the aria2 secret is required (it is on TCP, not on the unix
/// socket, whose 0600 mode already limits who can connect).
package struct RPCOrigin: Sendable, Hashable {
    package enum Transport: Sendable, Hashable {
        case unixSocket
        case tcp
    }

    package var transport: Transport

    package init(transport: Transport) {
        self.transport = transport
    }
}

/// The seam between the daemon's servers (HTTP POST and WebSocket on a unix socket and TCP)
/// and the JSON-RPC layer: the servers move bytes, the handler understands them.
package protocol RPCRequestHandler: Sendable {
    /// Answers one JSON-RPC request body (a single call or a batch). Returns nil when there is
    /// nothing to send back (a notification, or a batch made only of notifications).
    func respond(to body: ByteBuffer, from origin: RPCOrigin) async -> ByteBuffer?

    /// Whether `candidate` is the daemon's secret, for what TCP clients reach outside
    /// JSON-RPC with a bearer token (`GET /metrics`); checked as a call's secret is, throttled
    /// after failures. A handler without a secret accepts none.
    func acceptsSecret(_ candidate: String) async -> Bool
}

extension RPCRequestHandler {
    package func acceptsSecret(_ candidate: String) async -> Bool { false }
}

/// Where the JSON-RPC layer sends server-to-client notifications (aria2's `aria2.onDownload…`):
/// the server passes each message to every open WebSocket connection.
package protocol RPCNotificationSink: Sendable {
    func broadcast(_ message: ByteBuffer) async
}
