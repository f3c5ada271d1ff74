import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP relay on 127.0.0.1 between a store and the test's PostgreSQL server that, once armed,
/// ends the next connection that sends `COMMIT`: right after the server answered it (the
/// transaction committed, and the client never hears so), or before the server got it (the
/// transaction is rolled back). What a `pg_terminate_backend` or a network cut does at the
/// worst moment, made to happen every time.
final class CommitCuttingRelay: Sendable {
    enum Cut: Sendable {
        /// `COMMIT` reaches the server; its answer does not reach the client.
        case afterTheAnswer
        /// `COMMIT` never reaches the server.
        case beforeTheServer
    }

    let port: Int
    private let listener: any Channel
    private let armed = NIOLockedValueBox<Cut?>(nil)
    private let cuts = NIOLockedValueBox(0)

    private init(port: Int, listener: any Channel) {
        self.port = port
        self.listener = listener
    }

    /// A relay to `upstreamPort` on 127.0.0.1, listening on a port of its own.
    static func start(to upstreamPort: Int) async throws -> CommitCuttingRelay {
        let box = NIOLockedValueBox<CommitCuttingRelay?>(nil)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { client in
                ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { server in
                        server.eventLoop.makeCompletedFuture {
                            try server.pipeline.syncOperations.addHandler(ServerSide(relay: box.withLockedValue { $0! }, client: client))
                        }
                    }
                    .connect(host: "127.0.0.1", port: upstreamPort)
                    .flatMap { server in
                        client.eventLoop.makeCompletedFuture {
                            try client.pipeline.syncOperations.addHandler(ClientSide(relay: box.withLockedValue { $0! }, server: server))
                        }.flatMap { client.setOption(.autoRead, value: true) }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let relay = CommitCuttingRelay(port: listener.localAddress!.port!, listener: listener)
        box.withLockedValue { $0 = relay }
        return relay
    }

    /// The next `COMMIT` through the relay is cut so.
    func arm(_ cut: Cut) {
        armed.withLockedValue { $0 = cut }
    }

    /// How many connections the relay cut.
    var cutsMade: Int { cuts.withLockedValue { $0 } }

    func stop() async {
        try? await listener.close()
    }

    /// The cut for a client's bytes, disarming: nil unless armed and they send `COMMIT`.
    fileprivate func cut(for bytes: ByteBuffer) -> Cut? {
        armed.withLockedValue { armed in
            guard let cut = armed, String(decoding: bytes.readableBytesView, as: UTF8.self).contains("COMMIT") else { return nil }
            armed = nil
            return cut
        }
    }

    fileprivate func counted() {
        cuts.withLockedValue { $0 += 1 }
    }

    /// What the client sends, to the server.
    private final class ClientSide: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let relay: CommitCuttingRelay
        let server: any Channel

        init(relay: CommitCuttingRelay, server: any Channel) {
            self.relay = relay
            self.server = server
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            switch relay.cut(for: bytes) {
            case .beforeTheServer:
                relay.counted()
                server.close(promise: nil)
                context.close(promise: nil)
            case .afterTheAnswer:
                // One event loop carries both sides: the server's side is reached directly.
                try? server.pipeline.syncOperations.handler(type: ServerSide.self).cutAtTheAnswer()
                server.writeAndFlush(bytes, promise: nil)
            case nil:
                server.writeAndFlush(bytes, promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            server.close(promise: nil)
        }
    }

    /// What the server answers, to the client: nothing more once the answer is to be cut.
    private final class ServerSide: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let relay: CommitCuttingRelay
        let client: any Channel
        private var cutting = false

        init(relay: CommitCuttingRelay, client: any Channel) {
            self.relay = relay
            self.client = client
        }

        func cutAtTheAnswer() {
            cutting = true
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !cutting else {
                relay.counted()
                cutting = false
                client.close(promise: nil)
                context.close(promise: nil)
                return
            }
            client.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            client.close(promise: nil)
        }
    }
}
