/// The positional parameters of one call, after the secret was taken off the front, with
/// typed accessors whose errors name the parameter: `Invalid params: parameter 0 (gid) must be
/// a string, got a number`. Indexes count from 0, as in aria2's messages.
package struct RPCParameters: Sendable, Hashable {
    package let values: [JSONValue]

    package init(_ values: [JSONValue]) {
        self.values = values
    }

    package var count: Int { values.count }

    /// The parameter at `index`, or nil when there are fewer parameters.
    package subscript(index: Int) -> JSONValue? {
        values.indices.contains(index) ? values[index] : nil
    }

    package func string(_ index: Int, _ name: String) throws(JSONRPCError) -> String {
        try required(index, name) { $0.stringValue }
    }

    package func optionalString(_ index: Int, _ name: String) throws(JSONRPCError) -> String? {
        try optional(index, name, expected: "a string") { $0.stringValue }
    }

    package func integer(_ index: Int, _ name: String) throws(JSONRPCError) -> Int {
        try required(index, name, expected: "an integer") { $0.integerValue.flatMap { Int(exactly: $0) } }
    }

    package func optionalInteger(_ index: Int, _ name: String) throws(JSONRPCError) -> Int? {
        try optional(index, name, expected: "an integer") { $0.integerValue.flatMap { Int(exactly: $0) } }
    }

    package func array(_ index: Int, _ name: String) throws(JSONRPCError) -> [JSONValue] {
        try required(index, name, expected: "an array") { $0.arrayValue }
    }

    package func object(_ index: Int, _ name: String) throws(JSONRPCError) -> [String: JSONValue] {
        try required(index, name, expected: "an object") { $0.objectValue }
    }

    package func optionalObject(_ index: Int, _ name: String) throws(JSONRPCError) -> [String: JSONValue]? {
        try optional(index, name, expected: "an object") { $0.objectValue }
    }

    /// An optional array whose elements must all be strings (aria2's `keys`).
    package func optionalStrings(_ index: Int, _ name: String) throws(JSONRPCError) -> [String]? {
        guard let elements = try optional(index, name, expected: "an array of strings", { $0.arrayValue }) else { return nil }
        var strings: [String] = []
        for element in elements {
            guard let string = element.stringValue else {
                throw .invalidParams("parameter \(index) (\(name)) must be an array of strings, and holds \(element.kindDescription)")
            }
            strings.append(string)
        }
        return strings
    }

    package func strings(_ index: Int, _ name: String) throws(JSONRPCError) -> [String] {
        guard let strings = try optionalStrings(index, name) else {
            throw .invalidParams("parameter \(index) (\(name)) is required but missing")
        }
        return strings
    }

    private func required<T>(
        _ index: Int, _ name: String, expected: String = "a string", _ extract: (JSONValue) -> T?
    ) throws(JSONRPCError) -> T {
        guard let value = self[index] else {
            throw .invalidParams("parameter \(index) (\(name)) is required but missing")
        }
        guard let typed = extract(value) else {
            throw .invalidParams("parameter \(index) (\(name)) must be \(expected), got \(value.kindDescription)")
        }
        return typed
    }

    /// A missing parameter and an explicit null are both "not given".
    private func optional<T>(
        _ index: Int, _ name: String, expected: String, _ extract: (JSONValue) -> T?
    ) throws(JSONRPCError) -> T? {
        guard let value = self[index], value != .null else { return nil }
        guard let typed = extract(value) else {
            throw .invalidParams("parameter \(index) (\(name)) must be \(expected), got \(value.kindDescription)")
        }
        return typed
    }
}
