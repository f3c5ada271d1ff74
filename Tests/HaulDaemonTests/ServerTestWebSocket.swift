import HaulTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A small WebSocket client for the tests, over TCP or a unix socket (the client that comes
/// with hummingbird-websocket only dials host names).
///
/// Received text messages arrive in `messages`, in order; pings are answered. With
/// `reading: false` the client never reads, like a client that hangs: once NIO's buffers are
/// full it stops taking bytes from the socket, and the server's writes to it back up.
final class ServerTestWebSocket: Sendable {
    let messages: AsyncStream<String>
    private let outgoing: AsyncStream<WebSocketFrame>.Continuation
    private let closeCodes: AsyncStream<WebSocketErrorCode?>
    private let task: Task<Void, Never>

    private enum Upgrade: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    struct Refused: Error {}

    static func connect(_ target: ServerTestTarget, path: String = "/jsonrpc", reading: Bool = true) async throws -> ServerTestWebSocket {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<EventLoopFuture<Upgrade>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 24) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: "localhost")
                let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                    upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                    upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                    configuration: NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration))
            }
        }
        let upgrade: EventLoopFuture<Upgrade> = switch target {
        case .unixSocket(let socketPath): try await bootstrap.connect(unixDomainSocketPath: socketPath, channelInitializer: initializer)
        case .tcp(let port): try await bootstrap.connect(host: "127.0.0.1", port: port, channelInitializer: initializer)
        }
        guard case .upgraded(let channel) = try await upgrade.get() else { throw Refused() }
        return ServerTestWebSocket(channel: channel, reading: reading)
    }

    private init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, reading: Bool) {
        let (messages, messageContinuation) = AsyncStream.makeStream(of: String.self)
        let (outgoingFrames, outgoing) = AsyncStream.makeStream(of: WebSocketFrame.self)
        let (closeCodes, closeContinuation) = AsyncStream.makeStream(of: WebSocketErrorCode?.self)
        self.messages = messages
        self.outgoing = outgoing
        self.closeCodes = closeCodes
        task = Task {
            var closeCode: WebSocketErrorCode?
            do {
                try await channel.executeThenClose { inbound, outbound in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await frame in outgoingFrames { try await outbound.write(frame) }
                        }
                        guard reading else {
                            try await group.next()
                            return
                        }
                        var pending = ByteBuffer()
                        for try await frame in inbound {
                            switch frame.opcode {
                            case .text, .continuation:
                                var data = frame.unmaskedData
                                pending.writeBuffer(&data)
                                if frame.fin {
                                    messageContinuation.yield(String(buffer: pending))
                                    pending.clear()
                                }
                            case .ping:
                                outgoing.yield(Self.frame(.pong, frame.unmaskedData))
                            case .connectionClose:
                                var data = frame.unmaskedData
                                closeCode = data.readWebSocketErrorCode()
                                outgoing.yield(Self.frame(.connectionClose, ByteBuffer()))
                                outgoing.finish()
                            default:
                                break
                            }
                            if closeCode != nil { break }
                        }
                        outgoing.finish()
                        try await group.waitForAll()
                    }
                }
            } catch {
                // The connection broke; the streams end all the same.
            }
            closeContinuation.yield(closeCode)
            closeContinuation.finish()
            messageContinuation.finish()
        }
    }

    private static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
    }

    /// Sends one text message.
    func send(_ text: String) {
        outgoing.yield(Self.frame(.text, ByteBuffer(string: text)))
    }

    /// The next text message, or nil once the connection has ended.
    func next(timeout: Duration = .seconds(20)) async throws -> String? {
        let messages = self.messages
        return try await withTimeLimit("a WebSocket message", within: timeout) {
            var iterator = messages.makeAsyncIterator()
            return await iterator.next()
        }
    }

    /// Waits for the connection to end; returns the status of the server's close frame (nil
    /// when the connection ended without one).
    func closed(timeout: Duration = .seconds(20)) async throws -> WebSocketErrorCode? {
        let codes = closeCodes
        return try await withTimeLimit("the WebSocket to close", within: timeout) {
            var iterator = codes.makeAsyncIterator()
            return await iterator.next() ?? nil
        }
    }

    /// Closes from this side and waits for the connection to end.
    func close() async {
        outgoing.yield(Self.frame(.connectionClose, ByteBuffer(bytes: [0x03, 0xE8])))
        outgoing.finish()
        task.cancel()
        await task.value
    }
}
