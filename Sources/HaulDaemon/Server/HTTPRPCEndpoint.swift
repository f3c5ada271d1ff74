import Hummingbird
import NIOCore

/// JSON-RPC over HTTP POST: the body goes to the handler, its answer is the response (HTTP
/// 400 when it is a single error, as from aria2).
///
/// The body is read up to the request limit and no further. A declared `Content-Length` over
/// the limit is refused before a byte of the body is read; a chunked body that grows past it
/// is refused as soon as it does. Either way the client gets 413 with a JSON-RPC error, and
/// the connection is closed afterwards (see `RefusalResponse`), so a client that keeps
/// sending cannot make the daemon read its body to the end.
struct HTTPRPCEndpoint: Sendable {
    let handler: any RPCRequestHandler
    let maxBodyBytes: Int

    func respond(to request: Request, context: RPCRequestContext) async throws -> Response {
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > maxBodyBytes {
            return RefusalResponse.tooLarge(limit: maxBodyBytes, channel: context.channel)
        }
        guard let body = try await collectBody(request.body) else {
            return RefusalResponse.tooLarge(limit: maxBodyBytes, channel: context.channel)
        }
        guard let answer = await handler.respond(to: body, from: context.origin) else {
            // Only notifications: JSON-RPC sends nothing back.
            return Response(status: .noContent)
        }
        return Response(status: Self.status(of: answer), headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: answer))
    }

    /// 400 for an answer that is one error object, 200 otherwise (a result, or a batch's
    /// array whatever it holds): aria2's statuses, which some clients look at. The handler
    /// encodes keys sorted, so an error object, and only one, starts with `{"error":`.
    static func status(of answer: ByteBuffer) -> HTTPResponse.Status {
        answer.readableBytesView.starts(with: Self.errorPrefix) ? .badRequest : .ok
    }

    private static let errorPrefix = Array(#"{"error":"#.utf8)

    /// The whole body, or nil as soon as it is longer than the limit.
    private func collectBody(_ body: RequestBody) async throws -> ByteBuffer? {
        var collected = ByteBuffer()
        for try await part in body {
            guard collected.readableBytes + part.readableBytes <= maxBodyBytes else { return nil }
            var part = part
            collected.writeBuffer(&part)
        }
        return collected
    }
}
