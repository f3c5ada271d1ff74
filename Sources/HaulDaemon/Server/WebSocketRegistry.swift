import NIOCore

/// Every open WebSocket connection of the daemon, on both transports: where notifications are
/// broadcast.
actor WebSocketRegistry: RPCNotificationSink {
    private var connections: [ObjectIdentifier: WebSocketClientConnection] = [:]

    func register(_ connection: WebSocketClientConnection) {
        connections[ObjectIdentifier(connection)] = connection
    }

    func unregister(_ connection: WebSocketClientConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// How many connections are open (for tests and logs).
    var count: Int { connections.count }

    /// Queues `message` for every connection, without waiting for any of them; a connection
    /// whose backlog is full is disconnected and forgotten.
    func broadcast(_ message: ByteBuffer) {
        for (key, connection) in connections where !connection.send(message) {
            connections[key] = nil
        }
    }
}
