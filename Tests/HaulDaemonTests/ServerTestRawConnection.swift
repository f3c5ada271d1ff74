import HaulTestSupport
import NIOCore
import NIOPosix

/// Sends raw bytes to the daemon and reads what comes back until the daemon ends the stream:
/// for requests no HTTP client library would send (a malformed request line, a body announced
/// but never sent).
enum ServerTestRawConnection {
    /// With `until`, stops reading as soon as what came back satisfies it, without waiting
    /// for the daemon to end the stream.
    static func exchange(
        _ target: ServerTestTarget, sending request: String, timeout: Duration = .seconds(20),
        until isComplete: (@Sendable (String) -> Bool)? = nil
    ) async throws -> String {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, ByteBuffer>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        let channel = switch target {
        case .unixSocket(let path): try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: initializer)
        case .tcp(let port): try await bootstrap.connect(host: "127.0.0.1", port: port, channelInitializer: initializer)
        }
        return try await withTimeLimit("the daemon to end the connection", within: timeout) {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: request))
                var received = ByteBuffer()
                do {
                    for try await var chunk in inbound {
                        received.writeBuffer(&chunk)
                        if let isComplete, isComplete(String(buffer: received)) { break }
                    }
                } catch {
                    // A reset after the answer still leaves the answer in `received`.
                }
                return String(buffer: received)
            }
        }
    }
}
