/// Measures how deeply a JSON text nests arrays and objects, before it is decoded.
///
/// Decoders recurse once per level: a 2 MiB body of `[` would exhaust the stack of the task
/// decoding it and take the daemon down. This scan is linear, allocates nothing, and lets the
/// caller refuse such a body first. Brackets inside strings (with escapes) do not count; the
/// text need not be valid JSON (the decoder judges that afterwards).
enum JSONNesting {
    /// True when no array or object is nested deeper than `limit`.
    static func isWithin(_ limit: Int, _ bytes: some Sequence<UInt8>) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
        return true
    }
}
