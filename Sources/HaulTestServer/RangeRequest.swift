/// What a `Range` header asks of a representation of a known length (RFC 9110 §14).
///
/// Resume logic is exactly what the test server exists to exercise, so this follows the RFC
/// where a client could get confused: syntactically invalid or multi-range requests are ignored
/// (full `200`), while a well-formed range that starts past the end is `416`.
enum RangeRequest: Equatable, Sendable {
    /// No usable Range header: serve the whole representation with `200`.
    case whole
    /// Serve `range` of the representation with `206`.
    case partial(Range<Int>)
    /// A valid range none of whose bytes exist: `416` with `Content-Range: bytes */length`.
    case unsatisfiable

    /// Interprets the value of a `Range` header against `length` bytes.
    ///
    /// Supports `bytes=a-`, `bytes=a-b` and the suffix form `bytes=-n`.
    init(header: String?, length: Int) {
        guard let header else {
            self = .whole
            return
        }
        let trimmed = header.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = trimmed.dropFirst("bytes=".count).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let firstText = spec[..<dash].trimmingSpaces
        let lastText = spec[spec.index(after: dash)...].trimmingSpaces

        if firstText.isEmpty {
            // Suffix range: the last n bytes.
            guard let suffix = Int(lastText), suffix >= 0 else {
                self = .whole
                return
            }
            guard suffix > 0, length > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(max(0, length - suffix)..<length)
            return
        }
        guard let first = Int(firstText), first >= 0 else {
            self = .whole
            return
        }
        var last = length - 1
        if !lastText.isEmpty {
            guard let parsed = Int(lastText), parsed >= first else {
                self = .whole
                return
            }
            last = min(parsed, length - 1)
        }
        guard first < length else {
            self = .unsatisfiable
            return
        }
        self = .partial(first..<(last + 1))
    }
}

/// Evaluates `If-Range` (RFC 9110 §13.1.5) against the current validators.
///
/// The condition holds only for a strong ETag that matches exactly, or an HTTP-date that exactly
/// matches Last-Modified. Anything else (weak tags, a validator the server is not sending, a
/// changed version) means "the representation changed": send the whole thing with `200`.
enum IfRange {
    static func matches(_ header: String, etag: String?, weakETag: Bool, lastModified: String?) -> Bool {
        let value = header.trimmingSpaces
        if value.hasPrefix("W/") {
            return false
        }
        if value.hasPrefix("\"") {
            guard let etag, !weakETag else { return false }
            return value == etag
        }
        guard let lastModified else { return false }
        return value == lastModified
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let string = Substring(self)
        guard let start = string.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = string.lastIndex(where: { !isSpace($0) })!
        return string[start...end]
    }
}
