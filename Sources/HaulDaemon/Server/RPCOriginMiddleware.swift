import Hummingbird
import NIOCore

/// Browsers at `/jsonrpc`: applies the `RPCOriginPolicy`, answers CORS preflights, and
/// serves the GET form of JSON-RPC (`HTTPQueryRPCEndpoint`) that would otherwise reach the
/// WebSocket route.
///
/// Headers are aria2's: a preflight (`OPTIONS`) gets 200 with `Access-Control-Allow-Origin`,
/// `Access-Control-Allow-Methods: POST, GET, OPTIONS`, `Access-Control-Max-Age: 1728000` and
/// the requested headers in `Access-Control-Allow-Headers`; every other answer to an allowed
/// page carries `Access-Control-Allow-Origin`. A page that is not allowed gets 403 and its
/// call is not run.
struct RPCOriginMiddleware: RouterMiddleware {
    typealias Context = RPCRequestContext

    static let path = "/jsonrpc"

    let policy: RPCOriginPolicy
    let queryEndpoint: HTTPQueryRPCEndpoint

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path == Self.path else { return try await next(request, context) }
        let decision = policy.decide(origin: request.headers[.origin], host: request.head.authority)
        if decision == .refused {
            context.logger.notice("refused a browser page that is not allowed", metadata: ["origin": "\(request.headers[.origin] ?? "")"])
            return Self.refusal(origin: request.headers[.origin] ?? "")
        }
        var response: Response
        if request.method == .options {
            response = Response(status: .ok, headers: [
                .accessControlAllowMethods: "POST, GET, OPTIONS",
                .accessControlMaxAge: "1728000",
            ])
            if let requested = request.headers[.accessControlRequestHeaders] {
                response.headers[.accessControlAllowHeaders] = requested
            }
        } else if request.method == .get, request.headers[.upgrade] == nil {
            response = await queryEndpoint.respond(to: request.uri, context: context)
        } else {
            response = try await next(request, context)
        }
        if case .crossOrigin(let allowOrigin) = decision {
            response.headers[.accessControlAllowOrigin] = allowOrigin
            if allowOrigin != "*" { response.headers[.vary] = "Origin" }
        }
        return response
    }

    private static func refusal(origin: String) -> Response {
        let message = JSONValue.string("requests from the web page \(origin) are not allowed; "
            + "start the daemon with --rpc-allow-origin \(origin) or --rpc-allow-origin-all")
        let error: JSONValue = .object(["code": .integer(-32600), "message": message])
        let body = JSONRPCEncoding.encode(.object(["jsonrpc": .string("2.0"), "id": .null, "error": error]))
        return Response(status: .forbidden, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
