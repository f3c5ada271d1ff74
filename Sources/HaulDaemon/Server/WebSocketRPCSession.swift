import HummingbirdWebSocket
import Logging
import NIOCore

/// JSON-RPC over one WebSocket connection: each message is a request body for the handler, its
/// answer goes back on the same connection, and the connection receives every broadcast
/// notification until it closes.
///
/// Requests of one connection are answered one after another, in order (as aria2 does);
/// other connections are not held up by them. A message longer than the request limit closes
/// the connection with status 1009 (message too big).
struct WebSocketRPCSession: Sendable {
    let handler: any RPCRequestHandler
    let registry: WebSocketRegistry
    let maxMessageBytes: Int
    let backlogLimit: Int

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, context: RPCRequestContext) async throws {
        let origin = context.origin
        let connection = WebSocketClientConnection(channel: context.channel, backlogLimit: backlogLimit)
        await registry.register(connection)
        let logger = context.logger
        var failure: (any Error)?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for await message in connection.outgoing {
                        try await outbound.writeTextMessage(String(buffer: message))
                    }
                } catch {
                    // The connection broke or was closed; the reader sees it end too.
                    logger.debug("WebSocket write failed", metadata: ["error": "\(error)"])
                    connection.disconnect()
                }
            }
            do {
                for try await message in inbound.messages(maxSize: maxMessageBytes) {
                    let body: ByteBuffer = switch message {
                    case .text(let text): ByteBuffer(string: text)
                    case .binary(let bytes): bytes
                    }
                    if let answer = await handler.respond(to: body, from: origin), !connection.send(answer) {
                        break
                    }
                }
            } catch {
                // Rethrown below, so that the WebSocket closes with the matching status.
                failure = error
            }
            await registry.unregister(connection)
            connection.finish()
            group.cancelAll()
        }
        if let failure { throw failure }
    }
}
