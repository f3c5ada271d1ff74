import Foundation

/// One JSON-RPC 2.0 call as the client sends it: `{"jsonrpc":"2.0","id":…,"method":…,"params":[…]}`.
///
/// Parameters are positional, as aria2 takes them; each is any `Encodable` value, so that a
/// caller can pass a string, an options object and an array in one call.
struct JSONRPCCall: Encodable {
    let id: String
    let method: String
    let params: [RPCParameter]

    enum CodingKeys: String, CodingKey { case jsonrpc, id, method, params }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("2.0", forKey: .jsonrpc)
        try container.encode(id, forKey: .id)
        try container.encode(method, forKey: .method)
        try container.encode(params, forKey: .params)
    }
}

/// A positional JSON-RPC parameter: any value that encodes itself to JSON.
package struct RPCParameter: Encodable, Sendable {
    let value: any Encodable & Sendable

    package init(_ value: any Encodable & Sendable) {
        self.value = value
    }

    package func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// The daemon's answer to one call: a result or an error object, and the call's id.
struct JSONRPCReply<Result: Decodable>: Decodable {
    let id: String?
    let result: Result?
    let error: JSONRPCErrorObject?

    enum CodingKeys: String, CodingKey { case id, result, error }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // An id may be a string, a number or null (the daemon could not read the request's).
        id = (try? container.decode(String.self, forKey: .id))
            ?? (try? container.decode(Int.self, forKey: .id)).map(String.init)
        error = try container.decodeIfPresent(JSONRPCErrorObject.self, forKey: .error)
        result = error == nil ? try container.decodeIfPresent(Result.self, forKey: .result) : nil
    }
}

/// A JSON-RPC error object: `{"code": -32601, "message": "…", "data": …}`.
///
/// When the daemon knows which `HaulError` caused the failure it names its code in
/// `data.haulCode` (for example `"unknownDownload"`), so that the client can rebuild the same
/// error instead of a generic `rpcError`.
struct JSONRPCErrorObject: Decodable, Sendable {
    let code: Int
    let message: String
    let haulCode: String?

    enum CodingKeys: String, CodingKey { case code, message, data }
    enum DataKeys: String, CodingKey { case haulCode }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(Int.self, forKey: .code)
        message = (try? container.decode(String.self, forKey: .message)) ?? ""
        let data = try? container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        haulCode = try? data?.decodeIfPresent(String.self, forKey: .haulCode)
    }

    /// The error a caller sees: the daemon's own `HaulError` code when it named one, else
    /// `.rpcError`; the JSON-RPC number is kept either way.
    var haulError: HaulError {
        let text = message.isEmpty ? "JSON-RPC error \(code)" : message
        if let haulCode, let known = HaulError.Code(named: haulCode) {
            return HaulError(known, text, rpcCode: code)
        }
        return HaulError(.rpcError, "the daemon answered: \(text) (JSON-RPC error \(code))", rpcCode: code)
    }
}
