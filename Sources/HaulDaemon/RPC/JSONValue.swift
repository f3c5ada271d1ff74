/// A JSON value as JSON-RPC carries it: requests are decoded into it, results are built from it.
///
/// Integers and floating-point numbers are kept apart, because aria2's interface has integer
/// parameters (offsets, positions) and no floating-point ones: `1.5` where an integer is
/// expected must be refused, not rounded.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    /// JSON text written already, put into an answer as it is: the outbox's stored events
    /// (`StoredEventText.answerText`). Only answers hold it; parsing never makes one.
    case written([UInt8])

    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    package var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    package var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    package var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    package subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// What kind of value this is, for error messages ("got a number").
    package var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        case .written: return "JSON text"
        }
    }
}

/// Literals make results and tests readable. There is deliberately no `nil` literal: it
/// would turn a missing value (`Optional.none`) into JSON `null` without anyone noticing.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .written(let text): try container.encode(try text.withUnsafeBytes { try JSONValueParser.parse($0) })
        }
    }
}
