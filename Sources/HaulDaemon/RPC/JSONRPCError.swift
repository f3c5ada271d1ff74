import Haul

/// The `error` member of a JSON-RPC response: a code and a message for people.
///
/// The protocol's own failures use JSON-RPC 2.0's reserved codes. A method that fails answers
/// the way aria2 does: code 1 and a message (aria2 has no other code), so that aria2 clients,
/// which show the message, keep working.
package struct JSONRPCError: Error, Sendable, Hashable, CustomStringConvertible {
    package var code: Int
    package var message: String

    package init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// The body is not JSON. (-32700)
    package static func parseError(_ detail: String? = nil) -> JSONRPCError {
        JSONRPCError(code: -32700, message: detail.map { "Parse error: \($0)" } ?? "Parse error.")
    }

    /// The JSON is not a valid request object, or the request is over a limit. (-32600)
    package static func invalidRequest(_ detail: String? = nil) -> JSONRPCError {
        JSONRPCError(code: -32600, message: detail.map { "Invalid Request: \($0)" } ?? "Invalid Request.")
    }

    /// No method has that name. (-32601)
    package static func methodNotFound(_ name: String) -> JSONRPCError {
        JSONRPCError(code: -32601, message: "No such method: \(name)")
    }

    /// A parameter is missing or has the wrong type. (-32602)
    package static func invalidParams(_ detail: String) -> JSONRPCError {
        JSONRPCError(code: -32602, message: "Invalid params: \(detail)")
    }

    /// A method failed, in aria2's shape: code 1 and a message.
    package static func failed(_ message: String) -> JSONRPCError {
        JSONRPCError(code: 1, message: message)
    }

    /// A Haul error as a failed method: code 1 and its message.
    package init(_ error: HaulError) {
        self = .failed(error.message)
    }

    /// The secret is missing or wrong (aria2's answer, word for word, which clients match).
    package static let unauthorized = JSONRPCError.failed("Unauthorized")

    package var description: String { "\(code): \(message)" }

    /// The error object as it appears in a response.
    var json: JSONValue {
        .object(["code": .integer(Int64(code)), "message": .string(message)])
    }
}
