import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// Hummingbird's HTTP/1 + WebSocket child channel, with one gap closed: a connection whose
/// first request cannot be parsed is answered 400 and closed. On TCP, each connection is also
/// admitted by the listener's `ConnectionTable`.
///
/// The WebSocket upgrade machinery decides between "upgrade" and "plain HTTP" on the first
/// request head; a parse error before that decision reaches no handler, so the connection
/// would stay open and silent until the client gave up. Two small handlers fix that: a guard
/// at the end of the pipeline that notices an error arriving before any request got through,
/// and a raw writer at the front that can send bytes past the HTTP encoder. A connection that
/// ends before its first request is logged at debug level, not as an error
/// (`ConnectionNoiseFilter`).
struct GuardedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    /// The TCP listener's connection table (`ConnectionAdmission`); nil on the unix socket.
    var admission: ConnectionTable?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admission = self.admission
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let writer = RawBytesWriter()
            try channel.pipeline.syncOperations.addHandler(writer, position: .first)
            try channel.pipeline.syncOperations.addHandler(FirstRequestGuard(writer: writer))
            if let admission {
                try channel.pipeline.syncOperations.addHandler(ConnectionAdmissionHandler(table: admission), position: .first)
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: ConnectionNoiseFilter.wrapping(logger))
    }
}

/// Writes bytes straight to the socket, below the HTTP encoder; passes everything else on.
private final class RawBytesWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func writeAndFlush(_ bytes: ByteBuffer) {
        context?.writeAndFlush(NIOAny(bytes), promise: nil)
    }
}

/// Watches the connection until its first request is through (a request part or the upgrade
/// event passes by), then steps out of the pipeline. An error before that point is a request
/// that could not be parsed: answer 400 and close.
private final class FirstRequestGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private let writer: RawBytesWriter
    private var done = false

    init(writer: RawBytesWriter) {
        self.writer = writer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        stepOut(context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        stepOut(context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !done else { return context.fireErrorCaught(error) }
        done = true
        writer.writeAndFlush(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
        context.close(promise: nil)
    }

    private func stepOut(_ context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
