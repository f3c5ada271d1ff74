/// What identifies the bytes a server serves, so that a resume only appends to the same file.
enum Validator: Codable, Hashable, Sendable {
    /// A strong ETag, quotes included, exactly as the server sent it.
    case etag(String)
    /// A Last-Modified date, exactly as the server sent it.
    case lastModified(String)

    /// The value for `If-Range`.
    var headerValue: String {
        switch self {
        case .etag(let value), .lastModified(let value): return value
        }
    }
}
