/// Writes the JSON of the store's own column shapes by hand.
///
/// Why: Foundation's `JSONEncoder` builds a tree of boxed values for every call, and every row
/// written carries a few small JSON values (the CLI's metadata, a validator, a placement
/// intent). Over thousands of small downloads that was most of the cost of writing their rows.
/// These shapes are flat and few, so writing them directly is short and easy to check: the
/// output is compact, with keys sorted, exactly as `JSONColumns` asked of `JSONEncoder`
/// (`JSONTextTests` compares the two), and `JSONDecoder` still reads it back.
package enum JSONText {
    /// `value` as a JSON string literal: quotes, backslashes and control characters escaped,
    /// everything else (slashes and non-ASCII included) as it is.
    static func quoted(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &out)
        return out
    }

    /// Appends `quoted(value)` to `out`, without a string of its own in between.
    package static func appendQuoted(_ value: String, to out: inout String) {
        guard needsEscaping(value) else {
            // Nearly every string: a name, a URL, a path, an ID.
            out += "\""
            out += value
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        appendQuoted(value, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `quoted(value)`'s UTF-8 bytes to `out`: for writers of JSON as bytes (the
    /// daemon's answers), which would otherwise pay for a `String` per value.
    package static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            // Runs of bytes that need no escape go in whole.
            var runStart = 0
            for (offset, byte) in bytes.enumerated() where Self.needsEscaping(byte) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<offset]))
                runStart = offset + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The decimal digits of `value`, written in place: for writers of JSON as bytes, which
    /// would otherwise pay for a `String` per number.
    package static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        // The magnitude as unsigned, so that Int64.min has one.
        var magnitude = value.magnitude
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }

    /// Quotes, backslashes and control characters are escaped; every other byte (slashes and
    /// each byte of a non-ASCII character) is written as it is.
    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func needsEscaping(_ value: String) -> Bool {
        value.utf8.contains(where: needsEscaping)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `[["name","value"],…]`
    static func pairs(_ pairs: [(String, String)]) -> String {
        if pairs.isEmpty { return "[]" }
        return "[" + pairs.map { "[" + quoted($0.0) + "," + quoted($0.1) + "]" }.joined(separator: ",") + "]"
    }

    /// `["a","b",…]`
    static func strings(_ values: [String]) -> String {
        if values.isEmpty { return "[]" }
        return "[" + values.map(quoted).joined(separator: ",") + "]"
    }

    /// An object of string values, keys sorted.
    static func object(_ members: [String: String]) -> String {
        if members.isEmpty { return "{}" }
        return "{" + members.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + quoted($0.value) }.joined(separator: ",") + "}"
    }

    /// An object whose members are already JSON, written in the order given (the caller
    /// gives them sorted).
    /// Written into one string sized up front: every file of a batch has a placement intent.
    static func object(sortedMembers members: [(key: String, json: String)]) -> String {
        var out = "{"
        out.reserveCapacity(members.reduce(2) { $0 + $1.key.utf8.count + $1.json.utf8.count + 4 })
        for (index, member) in members.enumerated() {
            if index > 0 { out += "," }
            appendQuoted(member.key, to: &out)
            out += ":"
            out += member.json
        }
        out += "}"
        return out
    }
}

extension PlacementIntent {
    /// The intent's column text, as `JSONEncoder` with sorted keys would write it.
    var jsonText: String {
        JSONText.object(sortedMembers: [
            ("device", String(device)),
            ("directory", JSONText.quoted(directory)),
            ("inode", String(inode)),
            ("length", String(length)),
            ("name", JSONText.quoted(name)),
            ("policy", JSONText.quoted(policy.rawValue)),
        ])
    }
}
