import Haul
import NIOCore

/// Sends aria2's notifications (`aria2.onDownloadStart`, …, params `[{"gid": "…"}]`) for the
/// manager's events through a sink (the daemon's WebSocket connections).
///
/// It subscribes when created, so no event between creation and `run()` is missed. A download
/// that retries after a transient failure is announced as started once, not per attempt.
public struct Aria2Notifications: Sendable {
    public static let names = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop",
        "aria2.onDownloadComplete", "aria2.onDownloadError",
    ]

    private let events: AsyncStream<DownloadEvent>
    private let sink: any RPCNotificationSink

    public init(manager: DownloadManager, sink: any RPCNotificationSink) {
        self.events = manager.events()
        self.sink = sink
    }

    /// Forwards events until the manager shuts down (its event stream ends) or the task is
    /// cancelled. Run it once, in a task or service of the daemon.
    public func run() async {
        var started: Set<DownloadID> = []
        for await event in events {
            guard let (method, id) = Self.notification(for: event, started: &started) else { continue }
            await sink.broadcast(ByteBuffer(bytes: JSONRPCEncoding.encode(Self.message(method, id))))
        }
    }

    /// The notification an event calls for, if any; `started` remembers downloads announced
    /// as started and not stopped since.
    static func notification(for event: DownloadEvent, started: inout Set<DownloadID>) -> (String, DownloadID)? {
        switch event {
        case .started(let id, _, _):
            return started.insert(id).inserted ? ("aria2.onDownloadStart", id) : nil
        case .paused(let id, _):
            started.remove(id)
            return ("aria2.onDownloadPause", id)
        case .canceled(let id):
            started.remove(id)
            return ("aria2.onDownloadStop", id)
        case .completed(let info):
            started.remove(info.id)
            return ("aria2.onDownloadComplete", info.id)
        case .failed(let info):
            started.remove(info.id)
            return ("aria2.onDownloadError", info.id)
        case .queued, .checkpointed, .progress, .retrying, .resumed, .groupProgress, .groupCompleted, .overallProgress:
            return nil
        }
    }

    /// A JSON-RPC notification: no `id`, so clients must not answer it.
    static func message(_ method: String, _ id: DownloadID) -> JSONValue {
        .object(["jsonrpc": "2.0", "method": .string(method), "params": [["gid": .string(id.description)]]])
    }
}
