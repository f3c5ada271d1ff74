import Haul

/// Writes a `JSONValue` as JSON text, exactly as `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` wrote it before (`JSONValueParserTests` compares the two): keys
/// in order of their strings, strings quoted as the store's columns are (`JSONText`), and a
/// double as Swift prints it without a trailing `.0`.
///
/// It exists for the same reason as `JSONValueParser`: going through `Codable` cost the
/// daemon a wrapping container per value, and its answers to `haul.events` are thousands of
/// values long.
enum JSONValueWriter {
    /// The text of `value`, or nil when it holds a double that is not finite (JSON has no
    /// way to write it).
    static func write(_ value: JSONValue) -> String? {
        var output = ""
        output.reserveCapacity(256)
        guard append(value, to: &output) else { return nil }
        return output
    }

    private static func append(_ value: JSONValue, to output: inout String) -> Bool {
        switch value {
        case .null:
            output += "null"
        case .bool(let flag):
            output += flag ? "true" : "false"
        case .integer(let integer):
            output += String(integer)
        case .double(let double):
            guard double.isFinite else { return false }
            var text = double.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            output += text
        case .string(let text):
            JSONText.appendQuoted(text, to: &output)
        case .array(let elements):
            output += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { output += "," }
                guard append(element, to: &output) else { return false }
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (position, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if position > 0 { output += "," }
                JSONText.appendQuoted(member.key, to: &output)
                output += ":"
                guard append(member.value, to: &output) else { return false }
            }
            output += "}"
        }
        return true
    }
}
