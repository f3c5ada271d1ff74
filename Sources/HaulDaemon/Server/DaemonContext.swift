import Logging

/// What the daemon hands to the code that composes its parts (the RPC handler, the session
/// host): the configuration in effect, the way to stop the daemon, and where to send
/// notifications for WebSocket clients.
package struct DaemonContext: Sendable {
    package let configuration: DaemonConfiguration
    /// The socket path in effect (`configuration.socketPath` or the default).
    package let socketPath: String
    /// Stops the daemon gracefully (aria2's `shutdown`).
    package let control: DaemonControl
    /// Sends a message to every open WebSocket connection (aria2's `onDownload…` notifications).
    package let notifications: any RPCNotificationSink
    package let logger: Logger
    /// Where the daemon's sessions make their instruments; served at `GET /metrics`.
    package let metrics: DaemonMetrics
}
