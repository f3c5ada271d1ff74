/// Measures how deeply a JSON text nests arrays and objects, and how many elements a top-level
/// array has, before it is decoded.
///
/// Decoders recurse once per level: a 2 MiB body of `[` would exhaust the stack of the task
/// decoding it and take the daemon down. And a batch of 100,000 calls costs seconds of CPU and
/// a hundred MiB to decode, only to be refused for its length. This scan is linear, allocates
/// nothing, and lets the caller refuse such bodies first. Brackets and commas inside strings
/// (with escapes) do not count; the text need not be valid JSON (the decoder judges that
/// afterwards).
enum JSONNesting {
    /// What one scan found.
    struct Shape: Sendable, Hashable {
        /// False when an array or object nests deeper than the limit (the scan stops there).
        var isWithinDepth: Bool
        /// The number of elements of a top-level array (its commas plus one, exact for valid
        /// JSON), or nil when the text is not an array or nests too deep.
        var batchLength: Int?
    }

    /// True when no array or object is nested deeper than `limit`.
    static func isWithin(_ limit: Int, _ bytes: some Sequence<UInt8>) -> Bool {
        scan(limit, bytes).isWithinDepth
    }

    static func scan(_ limit: Int, _ bytes: some Sequence<UInt8>) -> Shape {
        var depth = 0
        var strings = JSONStringState()
        var isArray: Bool?
        var commas = 0
        var isEmpty = true
        for byte in bytes {
            if strings.consumesInString(byte) { continue }
            let before = depth
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                continue
            case UInt8(ascii: "\""):
                strings.enterString()
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                if isArray == nil { isArray = byte == UInt8(ascii: "[") }
                depth += 1
                if depth > limit { return Shape(isWithinDepth: false, batchLength: nil) }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 1 { commas += 1 }
            default:
                break
            }
            if isArray == nil { isArray = false }
            // Anything inside the outermost brackets (not they themselves) is an element.
            if before >= 1, depth >= 1 { isEmpty = false }
        }
        guard isArray == true else { return Shape(isWithinDepth: true, batchLength: nil) }
        return Shape(isWithinDepth: true, batchLength: isEmpty ? 0 : commas + 1)
    }
}
