/// The attribute list of an HLS tag (RFC 8216 §4.2): `NAME=VALUE` pairs separated by commas,
/// where a value is a quoted string (which may contain commas), a hexadecimal sequence
/// (`0x…`), a number, a resolution (`640x360`) or an enumerated word.
///
/// Parsed strictly: a playlist is untrusted input, and a malformed list is an error that names
/// the line rather than a guess that might fetch or write something unintended.
package struct PlaylistAttributes: Sendable, Hashable {
    /// The pairs in the order written; names are upper case by the specification.
    package private(set) var pairs: [(name: String, value: String, quoted: Bool)] = []

    /// Most attributes a tag may carry; real tags have a dozen at most.
    static let maxCount = 64

    package init(parsing text: Substring, line: Int) throws(HaulError) {
        var rest = text[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else {
                throw Self.malformed(line, "an attribute without '=' in '\(text.prefix(80))'")
            }
            let name = String(rest[..<equals])
            guard !name.isEmpty, name.utf8.allSatisfy({ (65...90).contains($0) || (48...57).contains($0) || $0 == 45 }) else {
                throw Self.malformed(line, "'\(name.prefix(40))' is not an attribute name")
            }
            rest = rest[rest.index(after: equals)...]
            let value: String
            var quoted = false
            if rest.first == "\"" {
                let afterQuote = rest.index(after: rest.startIndex)
                guard let close = rest[afterQuote...].firstIndex(of: "\"") else {
                    throw Self.malformed(line, "the value of \(name) has no closing quote")
                }
                value = String(rest[afterQuote..<close])
                quoted = true
                rest = rest[rest.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
                guard !value.isEmpty, !value.contains("\"") else {
                    throw Self.malformed(line, "the value of \(name) is empty or badly quoted")
                }
            }
            if !rest.isEmpty {
                guard rest.first == "," else {
                    throw Self.malformed(line, "expected ',' after the value of \(name)")
                }
                rest = rest.dropFirst()
                guard !rest.isEmpty else { throw Self.malformed(line, "the attribute list ends with ','") }
            }
            guard !pairs.contains(where: { $0.name == name }) else {
                throw Self.malformed(line, "\(name) is given twice")
            }
            pairs.append((name, value, quoted))
            guard pairs.count <= Self.maxCount else {
                throw Self.malformed(line, "more than \(Self.maxCount) attributes")
            }
        }
    }

    package subscript(name: String) -> String? {
        pairs.first(where: { $0.name == name })?.value
    }

    /// A quoted-string attribute; an unquoted value where the specification wants quotes is an error.
    func string(_ name: String, line: Int) throws(HaulError) -> String? {
        guard let pair = pairs.first(where: { $0.name == name }) else { return nil }
        guard pair.quoted else { throw Self.malformed(line, "\(name) must be a quoted string") }
        return pair.value
    }

    /// A decimal-integer attribute.
    func integer(_ name: String, line: Int) throws(HaulError) -> Int64? {
        guard let text = self[name] else { return nil }
        guard text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int64(text) else {
            throw Self.malformed(line, "\(name)=\(text.prefix(40)) is not a decimal integer")
        }
        return value
    }

    /// A hexadecimal-sequence attribute (`0x…`), as bytes.
    func hexBytes(_ name: String, line: Int) throws(HaulError) -> [UInt8]? {
        guard let text = self[name] else { return nil }
        guard let bytes = Self.hexBytes(text) else {
            throw Self.malformed(line, "\(name)=\(text.prefix(40)) is not a hexadecimal sequence")
        }
        return bytes
    }

    /// A `WIDTHxHEIGHT` attribute.
    func resolution(_ name: String, line: Int) throws(HaulError) -> Resolution? {
        guard let text = self[name] else { return nil }
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else {
            throw Self.malformed(line, "\(name)=\(text.prefix(40)) is not a resolution such as 1280x720")
        }
        return Resolution(width: width, height: height)
    }

    /// `0x` (or `0X`) then an even number of hex digits, at most 64 bytes.
    static func hexBytes(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count > 2, utf8.count <= 130, utf8[0] == 48, utf8[1] == 120 || utf8[1] == 88 else { return nil }
        var digits = Array(utf8[2...])
        if digits.count % 2 == 1 { digits.insert(48, at: 0) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: return byte - 48
        case 65...70: return byte - 55
        case 97...102: return byte - 87
        default: return nil
        }
    }

    static func malformed(_ line: Int, _ problem: String) -> HaulError {
        HaulError(.invalidResponse, "playlist line \(line): \(problem)")
    }

    package static func == (lhs: PlaylistAttributes, rhs: PlaylistAttributes) -> Bool {
        lhs.pairs.map(\.name) == rhs.pairs.map(\.name) && lhs.pairs.map(\.value) == rhs.pairs.map(\.value)
            && lhs.pairs.map(\.quoted) == rhs.pairs.map(\.quoted)
    }

    package func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.name)
            hasher.combine(pair.value)
        }
    }
}

/// A video resolution, `WIDTHxHEIGHT`.
package struct Resolution: Sendable, Hashable, Codable, CustomStringConvertible {
    package var width: Int
    package var height: Int

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    package var description: String { "\(width)x\(height)" }
}
