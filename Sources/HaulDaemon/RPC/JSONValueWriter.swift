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
    /// The UTF-8 text of `value`, or nil when it holds a double that is not finite (JSON has
    /// no way to write it).
    ///
    /// Written as bytes, not as a `String`: appending to a `String` piece by piece (and a
    /// `String` for every integer) made `tellStopped(0, 1000)` take a quarter longer (43 ms
    /// against 35 ms, medians of 6 interleaved runs of `bench/daemon_history.py`).
    static func write(_ value: JSONValue) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        guard append(value, to: &output) else { return nil }
        return output
    }

    private static func append(_ value: JSONValue, to output: inout [UInt8]) -> Bool {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let flag):
            output.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .integer(let integer):
            JSONText.appendDecimal(integer, to: &output)
        case .double(let double):
            guard double.isFinite else { return false }
            var text = double.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            output.append(contentsOf: text.utf8)
        case .string(let text):
            JSONText.appendQuoted(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                guard append(element, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.appendQuoted(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                guard append(member.value, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "}"))
        case .written(let text):
            output.append(contentsOf: text)
        }
        return true
    }
}
