import Foundation

/// Turns untrusted names (from a server's Content-Disposition or a URL) into a single safe
/// path component, and checks names given by users.
///
/// Whatever comes in, what comes out contains no `/`, no `\`, no control character (the
/// bidirectional controls included, which make `evil\u{202E}txt.exe` show as "evilexe.txt"), is not
/// `.` or `..`, does not start with a dot (so it can neither hide nor collide with Haul's own
/// `.haul-*` part files), and fits in 255 bytes: joined to the destination directory it can
/// only name a file directly inside it.
enum FileNaming {
    static let maxNameBytes = 255
    static let fallbackName = "download"

    /// Checks a name the user chose; user names are never silently changed.
    static func validateUserFileName(_ name: String) throws(HaulError) {
        if name.isEmpty || name == "." || name == ".." {
            throw HaulError(.invalidFileName, "'\(name)' cannot be used as a file name")
        }
        if name.contains("/") || name.unicodeScalars.contains(where: isControl) {
            throw HaulError(.invalidFileName, "the file name '\(name.debugDescription)' must not contain '/' or control characters")
        }
        if let control = name.unicodeScalars.first(where: isBidirectionalControl) {
            let code = "U+" + String(control.value, radix: 16, uppercase: true)
            throw HaulError(
                .invalidFileName,
                "the file name '\(name.debugDescription)' must not contain bidirectional controls (\(code)): they make a name show as something it is not")
        }
        if name.utf8.count > maxNameBytes {
            throw HaulError(.invalidFileName, "the file name is longer than \(maxNameBytes) bytes")
        }
        if name.hasPrefix(".haul-") {
            throw HaulError(.invalidFileName, "names starting with '.haul-' are reserved for Haul's part files")
        }
    }

    /// Reduces an untrusted name to a safe single component, or nil when nothing usable is left.
    static func sanitize(_ raw: String) -> String? {
        isPlainName(raw) ? raw : sanitizedScalarByScalar(raw)
    }

    /// `sanitize` the long way, for any name: what `isPlainName` must agree with.
    static func sanitizedScalarByScalar(_ raw: String) -> String? {
        // Only the last component counts, whichever separator the sender used.
        let lastComponent = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: lastComponent.unicodeScalars.filter { !isControl($0) && !isBidirectionalControl($0) })
        var name = String(scalars).trimmingWhitespace()
        while name.hasPrefix(".") { name.removeFirst() }
        name = name.trimmingWhitespace()
        guard !name.isEmpty else { return nil }
        return truncate(name)
    }

    /// The name a server suggests in Content-Disposition: RFC 6266 `filename*` (RFC 8187
    /// encoding) wins over `filename`. Returns the raw, unsanitised value.
    static func contentDispositionName(_ header: String) -> String? {
        let parameters = parseParameters(header)
        if let extended = parameters["filename*"], let decoded = decodeExtendedValue(extended) {
            return decoded
        }
        return parameters["filename"]
    }

    /// The last path component of a URL, percent-decoded, as an untrusted raw name.
    /// Found by scanning the path's bytes from its end (trailing slashes skipped, as
    /// splitting on "/" would): named this way for every file of a batch, splitting built
    /// an array of every component.
    static func urlName(_ url: URL) -> String? {
        let path = url.path
        let bytes = path.utf8
        let slash = UInt8(ascii: "/")
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == slash { end = bytes.index(before: end) }
        var start = end
        while start > bytes.startIndex, bytes[bytes.index(before: start)] != slash { start = bytes.index(before: start) }
        // Both ends sit next to a "/" or at an end of the path: whole characters.
        return start == end ? nil : String(path[start..<end])
    }

    /// Picks the final name: the user's, else the server's, else the URL's, else "download".
    static func resolveName(requested: String?, contentDisposition: String?, originalURL: URL, finalURL: URL?) -> String {
        if let requested { return requested }
        // In order, each worked out only when the ones before it gave nothing.
        if let raw = contentDisposition.flatMap(contentDispositionName), let safe = sanitize(raw) { return safe }
        if let raw = urlName(originalURL), let safe = sanitize(raw) { return safe }
        if let raw = finalURL.flatMap(urlName), let safe = sanitize(raw) { return safe }
        return fallbackName
    }

    // MARK: Helpers

    /// Whether `raw` is already what `sanitize` would make of it, as most URL names are:
    /// printable ASCII without a separator, not starting with a dot or a blank nor ending
    /// with a blank, at most 255 bytes. Checked byte by byte, without building a new string
    /// (a batch of thousands of small files named each one this way).
    static func isPlainName(_ raw: String) -> Bool {
        let bytes = raw.utf8
        guard let first = bytes.first, let last = bytes.last, bytes.count <= maxNameBytes,
              first != UInt8(ascii: "."), first != UInt8(ascii: " "), last != UInt8(ascii: " ")
        else { return false }
        return bytes.allSatisfy { byte in
            byte == UInt8(ascii: " ") || (byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\"))
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// Unicode's explicit bidirectional formatting characters (embeddings and overrides
    /// U+202A–U+202E, isolates U+2066–U+2069) and marks (U+200E, U+200F, U+061C): invisible,
    /// they reorder how the rest of a name is shown, so a server could make `exe` read `txt`.
    static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }

    /// Shortens to 255 UTF-8 bytes, keeping the extension where it is short.
    private static func truncate(_ name: String) -> String {
        guard name.utf8.count > maxNameBytes else { return name }
        let ext = (name as NSString).pathExtension
        let suffix = ext.isEmpty || ext.utf8.count > 16 ? "" : "." + ext
        var stem = String(name.dropLast(suffix.count))
        while stem.utf8.count + suffix.utf8.count > maxNameBytes { stem.removeLast() }
        return stem + suffix
    }

    /// Splits `type; a=b; c="d e"` into lowercase names and unquoted values.
    private static func parseParameters(_ header: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(header)
        // Skip the disposition type.
        guard let firstSemicolon = rest.firstIndex(of: ";") else { return result }
        rest = rest[rest.index(after: firstSemicolon)...]
        while !rest.isEmpty {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == ";" })
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingBlanks().lowercased()
            rest = rest[rest.index(after: equals)...].drop(while: { $0 == " " || $0 == "\t" })
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped { value.append(character); escaped = false; continue }
                    if character == "\\" { escaped = true; continue }
                    if character == "\"" { break }
                    value.append(character)
                }
                rest = rest.drop(while: { $0 != ";" })
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                value = rest[..<end].trimmingBlanks()
                rest = rest[end...]
            }
            if result[name] == nil { result[name] = value }
        }
        return result
    }

    /// Decodes `UTF-8'lang'percent%20encoded` (RFC 8187). Only UTF-8 and ISO-8859-1 are allowed.
    private static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        let encoded = String(parts[2])
        if charset == "utf-8" { return encoded.removingPercentEncoding }
        if charset == "iso-8859-1" {
            var bytes: [UInt8] = []
            var iterator = encoded.utf8.makeIterator()
            while let byte = iterator.next() {
                if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                   let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                    bytes.append(value)
                } else {
                    bytes.append(byte)
                }
            }
            return String(bytes.map { Character(Unicode.Scalar($0)) })
        }
        return nil
    }
}
