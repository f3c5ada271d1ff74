/// One request the test server saw, as tests want to assert on it.
///
/// Engine tests check what went over the wire (did the resume send `Range: bytes=N-` and the
/// stored `If-Range`? how many retries?), so every request is kept with its headers and the
/// status the server chose for it.
public struct RecordedRequest: Sendable {
    /// The method, e.g. `GET`.
    public var method: String
    /// The path without the query, e.g. `/file/a.bin`.
    public var path: String
    /// The raw query (without `?`), or the empty string.
    public var query: String
    /// Header fields in the order received, names as the client spelled them.
    public var headers: [(String, String)]
    /// The status the server answered with (a dropped response still counts as its status).
    public var status: Int

    public init(method: String, path: String, query: String = "", headers: [(String, String)], status: Int) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.status = status
    }

    /// The first value of header `name`, compared case-insensitively; nil when absent.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return self.headers.first { $0.0.lowercased() == wanted }?.1
    }
}
