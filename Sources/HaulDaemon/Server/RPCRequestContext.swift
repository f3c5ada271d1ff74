import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of the daemon's router: Hummingbird's own, the WebSocket upgrade slot,
/// and the connection's channel, which tells the transport (and lets a too-slow WebSocket
/// client be disconnected).
struct RPCRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<RPCRequestContext>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = CoreRequestContextStorage(source: source)
        self.webSocket = WebSocketHandlerReference()
        self.channel = source.channel
    }

    /// The transport the request came in on. A connection whose local address cannot be read
    /// counts as TCP, the transport that demands the secret.
    var origin: RPCOrigin {
        if case .unixDomainSocket = channel.localAddress {
            return RPCOrigin(transport: .unixSocket)
        }
        return RPCOrigin(transport: .tcp)
    }
}
