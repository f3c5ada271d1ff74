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
        out += "\""
        var plain = true
        for byte in value.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            plain = false
            break
        }
        if plain {
            out += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                case let control where control.value < 0x20:
                    let hex = String(control.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

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
