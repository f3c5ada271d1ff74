import Foundation
import Hummingbird
import NIOCore

/// `GET /metrics`: the daemon's metrics in Prometheus's text exposition format.
///
/// Access follows the daemon's trust model: the unix socket is trusted (its 0600 mode and the
/// peer check keep other users out), TCP needs the RPC secret, sent as Prometheus sends a
/// credential, `Authorization: Bearer SECRET` (its `authorization` or `bearer_token_file`
/// setting). The figures are not secret in themselves, but they say what the user downloads
/// and when, which a loopback port would otherwise tell every local user. A missing or wrong
/// token gets 401, after the same throttled check as a JSON-RPC call's secret.
struct MetricsEndpoint: Sendable {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    let metrics: DaemonMetrics
    let handler: any RPCRequestHandler

    func respond(to request: Request, context: RPCRequestContext) async -> Response {
        if context.origin.transport == .tcp {
            guard let token = Self.bearerToken(request.headers[.authorization]), await handler.acceptsSecret(token) else {
                return Response(
                    status: .unauthorized, headers: [.wwwAuthenticate: #"Bearer realm="haul""#, .contentType: "text/plain"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "send the daemon's RPC secret as Authorization: Bearer SECRET\n")))
            }
        }
        let body = ByteBuffer(bytes: metrics.exposition())
        return Response(status: .ok, headers: [.contentType: Self.contentType], body: ResponseBody(byteBuffer: body))
    }

    /// The token of an `Authorization: Bearer TOKEN` header (the scheme in any case), or nil.
    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
