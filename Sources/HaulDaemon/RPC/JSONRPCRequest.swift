/// One call of a JSON-RPC body, checked against JSON-RPC 2.0's rules for a request object.
struct JSONRPCRequest: Sendable, Hashable {
    /// Nil for a notification (no `id` member): it is carried out and never answered.
    var id: JSONValue?
    var method: String
    /// Positional parameters; aria2 has no named ones.
    var params: [JSONValue]

    var isNotification: Bool { id == nil }

    /// What one element of a body turned out to be.
    enum Parsed: Sendable, Hashable {
        case request(JSONRPCRequest)
        /// Not a usable request; answered with this error and id (null when the id itself was
        /// unusable), unless `answer` is false (a notification with bad parameters).
        case invalid(id: JSONValue, error: JSONRPCError, answer: Bool)
    }

    static func parse(_ value: JSONValue) -> Parsed {
        guard let object = value.objectValue else {
            return .invalid(id: .null, error: .invalidRequest("a request is a JSON object, got \(value.kindDescription)"), answer: true)
        }
        let id = object["id"]
        switch id {
        case nil, .string?, .integer?, .double?, .null?:
            break
        case .some(let other):
            return .invalid(id: .null, error: .invalidRequest("id must be a string, a number or null, got \(other.kindDescription)"), answer: true)
        }
        let answerID = id ?? .null
        if let version = object["jsonrpc"], version != .string("2.0") {
            return .invalid(id: answerID, error: .invalidRequest("jsonrpc must be \"2.0\""), answer: true)
        }
        guard let method = object["method"]?.stringValue else {
            return .invalid(id: answerID, error: .invalidRequest("method must be a string"), answer: true)
        }
        let params: [JSONValue]
        switch object["params"] {
        case nil:
            params = []
        case .array(let values)?:
            params = values
        case .object?:
            return .invalid(id: answerID, error: .invalidParams("named parameters are not supported; pass them in an array"), answer: id != nil)
        case .some(let other):
            return .invalid(id: answerID, error: .invalidParams("params must be an array, got \(other.kindDescription)"), answer: id != nil)
        }
        return .request(JSONRPCRequest(id: id, method: method, params: params))
    }
}
