/// One call of a JSON-RPC body, checked against JSON-RPC 2.0's rules for a request object.
struct JSONRPCRequest: Sendable, Hashable {
    /// Always present: like aria2, the daemon has no client-to-server notifications, so a
    /// request without `id` is refused with -32600 (aria2 answers it that way, with HTTP 400)
    /// rather than run silently.
    var id: JSONValue
    var method: String
    /// Positional parameters; aria2 has no named ones.
    var params: [JSONValue]

    /// What one element of a body turned out to be.
    enum Parsed: Sendable, Hashable {
        case request(JSONRPCRequest)
        /// Not a usable request; answered with this error and id (null when the id itself was
        /// unusable or missing).
        case invalid(id: JSONValue, error: JSONRPCError)
    }

    static func parse(_ value: JSONValue) -> Parsed {
        guard let object = value.objectValue else {
            return .invalid(id: .null, error: .invalidRequest("a request is a JSON object, got \(value.kindDescription)"))
        }
        let id = object["id"]
        switch id {
        case nil, .string?, .integer?, .double?, .null?:
            break
        case .some(let other):
            return .invalid(id: .null, error: .invalidRequest("id must be a string, a number or null, got \(other.kindDescription)"))
        }
        let answerID = id ?? .null
        if let version = object["jsonrpc"], version != .string("2.0") {
            return .invalid(id: answerID, error: .invalidRequest("jsonrpc must be \"2.0\""))
        }
        guard let method = object["method"]?.stringValue else {
            return .invalid(id: answerID, error: .invalidRequest("method must be a string"))
        }
        let params: [JSONValue]
        switch object["params"] {
        case nil:
            params = []
        case .array(let values)?:
            params = values
        case .object?:
            return .invalid(id: answerID, error: .invalidParams("named parameters are not supported; pass them in an array"))
        case .some(let other):
            return .invalid(id: answerID, error: .invalidParams("params must be an array, got \(other.kindDescription)"))
        }
        guard let id else {
            return .invalid(id: .null, error: .invalidRequest("id is required (the daemon answers every request, as aria2 does)"))
        }
        return .request(JSONRPCRequest(id: id, method: method, params: params))
    }
}
