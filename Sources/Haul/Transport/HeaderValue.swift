/// Questions asked of a response header's value on every response, answered on its bytes.
///
/// Why: `lowercased()` and Foundation's `contains` build a lowercased copy and go through
/// `NSString` for each call, several allocations per response; a batch of small files asks
/// them of every file.
enum HeaderValue {
    /// Whether `value` contains `token` (lowercase ASCII), ignoring ASCII case: what
    /// `value.lowercased().contains(token)` answers, for an ASCII `token`.
    static func contains(_ value: String, lowercaseASCII token: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount)
        guard !needle.isEmpty else { return true }
        var value = value
        return value.withUTF8 { bytes in
            guard bytes.count >= needle.count else { return false }
            for start in 0...(bytes.count - needle.count) {
                var matched = true
                for offset in 0..<needle.count where lowercased(bytes[start + offset]) != needle[offset] {
                    matched = false
                    break
                }
                if matched { return true }
            }
            return false
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
