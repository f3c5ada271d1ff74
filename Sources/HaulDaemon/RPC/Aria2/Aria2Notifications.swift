import Haul
import NIOCore

/// Sends aria2's notifications (`aria2.onDownloadStart`, …, params `[{"gid": "…"}]`) for the
/// manager's events through a sink (the daemon's WebSocket connections).
///
/// It subscribes when created, so no event between creation and `run()` is missed. Which
/// notifications, in which order: `Aria2EventOrder`.
package struct Aria2Notifications: Sendable {
    package static let names = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop",
        "aria2.onDownloadComplete", "aria2.onDownloadError",
    ]

    private let events: AsyncStream<ManagerEvent>
    private let sink: any RPCNotificationSink

    package init(manager: DownloadManager, sink: any RPCNotificationSink) {
        self.events = manager.managerEvents()
        self.sink = sink
    }

    /// Forwards events until the manager shuts down (its event stream ends) or the task is
    /// cancelled. Run it once, in a task or service of the daemon.
    package func run() async {
        var order = Aria2EventOrder()
        for await event in events {
            for (method, id) in order.notifications(for: event) {
                await sink.broadcast(ByteBuffer(bytes: JSONRPCEncoding.encode(Self.message(method, id))))
            }
        }
    }

    /// A JSON-RPC notification: no `id`, so clients must not answer it.
    static func message(_ method: String, _ id: DownloadID) -> JSONValue {
        .object(["jsonrpc": "2.0", "method": .string(method), "params": [["gid": .string(id.description)]]])
    }
}
