/// A request's query, percent-decoded.
///
/// Hummingbird's `queryParameters` are not percent-decoded, and some of ours must arrive byte for
/// byte (`disposition=` carries hostile header values, `location=` raw redirect targets), so the
/// test server keeps its own small parser. `+` is left as `+` (RFC 3986, not HTML forms): a
/// value such as `filename="a+b"` must reach the header unchanged.
struct QueryParameters: Sendable {
    private var values: [String: [UInt8]] = [:]

    /// Parses a raw query string such as `size=10&disposition=attachment%3B%20x`.
    /// When a name repeats, the last value wins.
    init(_ query: String?) {
        guard let query, !query.isEmpty else { return }
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: Self.percentDecode(parts[0]), as: UTF8.self)
            let value = parts.count > 1 ? Self.percentDecode(parts[1]) : []
            self.values[name] = value
        }
    }

    /// The decoded value as UTF-8 text (invalid sequences become U+FFFD).
    subscript(_ name: String) -> String? {
        self.values[name].map { String(decoding: $0, as: UTF8.self) }
    }

    /// All parameters, decoded as text; used to carry a query over to the next redirect hop.
    var all: [String: String] {
        self.values.mapValues { String(decoding: $0, as: UTF8.self) }
    }

    /// The decoded value as raw bytes, for values that must reach a header unchanged.
    func bytes(_ name: String) -> [UInt8]? {
        self.values[name]
    }

    /// Decodes `%XX` escapes; a malformed escape is kept literally rather than rejected.
    static func percentDecode(_ input: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = input.startIndex
        while index != input.endIndex {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                let first = input.index(after: index)
                if first != input.endIndex {
                    let second = input.index(after: first)
                    if second != input.endIndex, let high = Self.hexValue(input[first]), let low = Self.hexValue(input[second]) {
                        output.append(high << 4 | low)
                        index = input.index(after: second)
                        continue
                    }
                }
            }
            output.append(byte)
            index = input.index(after: index)
        }
        return output
    }

    /// Encodes everything but RFC 3986 unreserved characters, so any value survives a round trip.
    static func percentEncode(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `name=value&…` with keys sorted, so URLs built from dictionaries are stable.
    static func encode(_ query: [String: String]) -> String {
        query.keys.sorted().map { "\(Self.percentEncode($0))=\(Self.percentEncode(query[$0]!))" }.joined(separator: "&")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
