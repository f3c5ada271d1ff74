import Hummingbird
import HummingbirdWebSocket

/// The daemon's routes, the same on the unix socket and on TCP:
/// `POST /jsonrpc` (one request per HTTP request), `GET /jsonrpc` upgraded to a WebSocket
/// (many requests, and notifications), and for browsers `GET /jsonrpc?method=…` and CORS
/// preflights (`RPCOriginMiddleware`, which also keeps out pages that are not allowed), the web dashboard's static files (`GET /` and
/// `/dashboard/…`, see `DashboardRoutes`), and Prometheus metrics (`GET /metrics`, see
/// `MetricsEndpoint`). Anything else is 404.
///
/// Built once and shared by both listeners (a built responder is immutable and `Sendable`,
/// unlike the router it comes from).
struct RPCRouter: HTTPResponderBuilder, Sendable {
    let responder: RouterResponder<RPCRequestContext>

    init(handler: any RPCRequestHandler, registry: WebSocketRegistry, metrics: DaemonMetrics, configuration: DaemonConfiguration) {
        responder = Self.makeRouter(handler: handler, registry: registry, metrics: metrics, configuration: configuration)
            .buildResponder()
    }

    func buildResponder() -> RouterResponder<RPCRequestContext> {
        responder
    }

    private static func makeRouter(
        handler: any RPCRequestHandler, registry: WebSocketRegistry, metrics: DaemonMetrics, configuration: DaemonConfiguration
    ) -> Router<RPCRequestContext> {
        let router = Router(context: RPCRequestContext.self)
        router.add(middleware: PeerCredentialsMiddleware(ownUserID: DaemonSystemCalls.userID))
        router.add(middleware: RPCOriginMiddleware(
            policy: configuration.allowedOrigins, queryEndpoint: HTTPQueryRPCEndpoint(handler: handler)))
        let endpoint = HTTPRPCEndpoint(handler: handler, maxBodyBytes: configuration.maxRequestBytes)
        router.post("jsonrpc") { request, context in
            try await endpoint.respond(to: request, context: context)
        }
        let session = WebSocketRPCSession(
            handler: handler, registry: registry,
            maxMessageBytes: configuration.maxRequestBytes, backlogLimit: configuration.webSocketBacklogLimit)
        router.ws("jsonrpc") { inbound, outbound, context in
            try await session.run(inbound: inbound, outbound: outbound, context: context.requestContext)
        }
        DashboardRoutes.register(on: router)
        let metricsEndpoint = MetricsEndpoint(metrics: metrics, handler: handler)
        router.get("metrics") { request, context in
            await metricsEndpoint.respond(to: request, context: context)
        }
        return router
    }
}
