import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore

/// JSON-RPC over HTTP GET, as aria2 serves it to browser pages:
/// `GET /jsonrpc?method=M&id=ID&params=P` where P is the base64 of the JSON params array,
/// answered as the same call would be over POST. Without `method`, P is the base64 of a
/// whole body (a batch). With `jsoncallback=NAME` the answer is JSONP, `NAME(json)` as
/// `text/javascript` (aria2's content type), so that a `<script>` tag can load it.
///
/// The id arrives as a string (a query has no types); an id is required, as for any call
/// that wants an answer.
struct HTTPQueryRPCEndpoint: Sendable {
    let handler: any RPCRequestHandler

    func respond(to uri: URI, context: RPCRequestContext) async -> Response {
        let query = uri.queryParameters
        let callback = query["jsoncallback"].map(String.init)
        if let callback, !Self.isCallbackName(callback) {
            return Response(status: .badRequest, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(
                string: "jsoncallback must be a JavaScript name (letters, digits, _, $ and dots)\n")))
        }
        let answer: ByteBuffer
        switch Self.body(method: query["method"].map(String.init), id: query["id"].map(String.init),
                         params: query["params"].map(String.init)) {
        case .success(let body):
            guard let handled = await handler.respond(to: ByteBuffer(bytes: body), from: context.origin) else {
                return Response(status: .noContent)
            }
            answer = handled
        case .failure(.message(let message)):
            let error: JSONValue = .object(["code": .integer(-32700), "message": .string(message)])
            answer = ByteBuffer(bytes: JSONRPCEncoding.encode(.object(["jsonrpc": .string("2.0"), "id": .null, "error": error])))
        }
        guard let callback else {
            return Response(status: HTTPRPCEndpoint.status(of: answer), headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: answer))
        }
        // JSONP stays 200 even for an error: a script tag runs no callback on an HTTP error.
        var script = ByteBuffer(string: callback + "(")
        script.writeImmutableBuffer(answer)
        script.writeString(")")
        return Response(status: .ok, headers: [.contentType: "text/javascript"], body: ResponseBody(byteBuffer: script))
    }

    enum BodyError: Error, Equatable { case message(String) }

    /// The POST body equivalent to a query, or why there is none.
    static func body(method: String?, id: String?, params: String?) -> Result<Data, BodyError> {
        var decoded: Data?
        if let params {
            guard let data = decodeBase64(params) else {
                return .failure(.message("params is not base64 (GET /jsonrpc takes the base64 of the JSON params array)"))
            }
            decoded = data
        }
        guard let method else {
            guard let decoded else { return .failure(.message("a GET request needs method (or params holding a whole request)")) }
            return .success(decoded)
        }
        var request: [String: JSONValue] = ["jsonrpc": .string("2.0"), "method": .string(method)]
        if let id { request["id"] = .string(id) }
        var body = JSONRPCEncoding.encode(.object(request))
        if let decoded {
            // Spliced in as bytes: the handler parses (and limits) them like any POST body.
            body.removeLast()
            body.append(contentsOf: Array(#","params":"#.utf8))
            body.append(decoded)
            body.append(contentsOf: Array("}".utf8))
        }
        return .success(body)
    }

    /// Base64 as front-ends send it: standard or URL-safe alphabet, padded or not, and a `+`
    /// that a form encoder turned into a space.
    static func decodeBase64(_ text: String) -> Data? {
        var normalized = String(text.map { character -> Character in
            switch character {
            case " ", "-": "+"
            case "_": "/"
            default: character
            }
        })
        while normalized.count % 4 != 0 { normalized.append("=") }
        return Data(base64Encoded: normalized)
    }

    /// A JavaScript name or dotted path (`cb`, `jQuery123_456`, `window.app.done`): nothing
    /// that could turn the answer into other code.
    static func isCallbackName(_ name: String) -> Bool {
        guard !name.isEmpty, name.count <= 128 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            guard let first = part.first, !first.isNumber else { return false }
            return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$") }
        }
    }
}
