import NIOCore

/// One open WebSocket connection as the daemon sees it: a bounded queue of messages waiting to
/// be written (answers and notifications, in order) and the channel to close when the client
/// falls too far behind.
///
/// Sending never waits. A client that stops reading (or died without closing) would otherwise
/// make every broadcast wait for it, or make the daemon hold an ever-growing backlog; instead,
/// the message that does not fit disconnects that client alone.
final class WebSocketClientConnection: Sendable {
    /// The messages to write, in order; finishes when the connection is done.
    let outgoing: AsyncStream<ByteBuffer>
    private let continuation: AsyncStream<ByteBuffer>.Continuation
    private let channel: any Channel

    init(channel: any Channel, backlogLimit: Int) {
        self.channel = channel
        (outgoing, continuation) = AsyncStream.makeStream(
            of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(max(1, backlogLimit)))
    }

    /// Queues `message`. Returns false when the connection is closed or has just been closed
    /// because `backlogLimit` messages were already waiting.
    @discardableResult
    func send(_ message: ByteBuffer) -> Bool {
        switch continuation.yield(message) {
        case .enqueued:
            return true
        case .dropped:
            disconnect()
            return false
        case .terminated:
            return false
        @unknown default:
            return false
        }
    }

    /// Ends the queue; the writer stops after what is already queued.
    func finish() {
        continuation.finish()
    }

    /// Ends the queue and closes the connection without waiting for the client.
    func disconnect() {
        continuation.finish()
        channel.close(promise: nil)
    }
}
