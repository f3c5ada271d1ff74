/// Writes a `JSONValue` as JSON text, exactly as `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` wrote it before (`JSONValueParserTests` compares the two): keys
/// in order of their strings, `"`, `\` and control characters escaped (`\n` and its kind
/// short, the others as lowercase `\u00xx`), everything else as its UTF-8 bytes, and a double
/// as Swift prints it without a trailing `.0`.
///
/// It exists for the same reason as `JSONValueParser`: going through `Codable` cost the
/// daemon a wrapping container per value, and its answers to `haul.events` are thousands of
/// values long.
enum JSONValueWriter {
    /// The text of `value`, or nil when it holds a double that is not finite (JSON has no
    /// way to write it).
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
            appendInteger(integer, to: &output)
        case .double(let double):
            guard double.isFinite else { return false }
            var text = double.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            output.append(contentsOf: text.utf8)
        case .string(let text):
            appendString(text, to: &output)
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
                appendString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                guard append(member.value, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "}"))
        }
        return true
    }

    private static func appendInteger(_ integer: Int64, to output: inout [UInt8]) {
        if integer < 0 { output.append(UInt8(ascii: "-")) }
        // The magnitude as unsigned, so that Int64.min has one.
        var magnitude = integer.magnitude
        let start = output.count
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        output[start...].reverse()
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func appendString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<offset]))
                runStart = offset + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    output.append(contentsOf: "u00".utf8)
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
