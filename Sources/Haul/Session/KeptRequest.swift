import Foundation

/// A `DownloadRequest` as the manager keeps it in memory: the URL as text.
///
/// Foundation's `URL` costs about 500 bytes of heap on Linux, more than everything else a
/// queued download needs; with 100,000 downloads waiting that is most of the manager's
/// memory. The text costs its length, and the `URL` is parsed again only when a transfer
/// starts or a caller asks for the download. Every other field is kept as the request had
/// it, so fields added to `DownloadRequest` are kept without changes here.
struct KeptRequest: Sendable, Hashable {
    /// The request with `url` set to one shared placeholder.
    private var rest: DownloadRequest
    let urlText: String

    init(_ request: DownloadRequest) {
        urlText = request.url.absoluteString
        rest = request
        rest.url = Self.placeholder
    }

    /// The request as it was given.
    var request: DownloadRequest { request(reusing: nil) }

    /// The request as it was given, with `parsed` for its URL when given: `urlText` parsed
    /// already (a running download keeps the URL its transfer parsed, `RecordDetails.parsedURL`,
    /// since parsing it again cost a `URL` and its parse for every file of a batch).
    /// A `parsed` URL whose text is not `urlText` (the request was replaced since) is not used.
    func request(reusing parsed: URL?) -> DownloadRequest {
        var request = rest
        if let parsed, parsed.absoluteString == urlText {
            request.url = parsed
        } else {
            request.url = URL(string: urlText) ?? Self.placeholder
        }
        return request
    }

    var directory: URL { rest.directory }
    var fileName: String? { rest.fileName }
    var headers: [HeaderField] { rest.headers }
    var checksums: [Checksum] { rest.checksums }
    var priority: Int {
        get { rest.priority }
        set { rest.priority = newValue }
    }
    var conflictPolicy: ConflictPolicy { rest.conflictPolicy }
    var metadata: [String: String] { rest.metadata }
    var split: Int? { rest.split }
    var mirrors: [URL] { rest.mirrors }
    var maxBytesPerSecond: Int64? {
        get { rest.maxBytesPerSecond }
        set { rest.maxBytesPerSecond = newValue }
    }
    var waitDeadline: Date? { rest.waitDeadline }

    /// Its `RequestIdentity`, given its directory's standardised path: standardising costs
    /// microseconds, so a batch works it out once per directory (`IdentityCache`).
    func identity(directoryPath: String) -> RequestIdentity {
        RequestIdentity(
            url: urlText, directory: directoryPath,
            fileName: rest.fileName,
            checksums: RequestIdentity.canonical(rest.checksums))
    }

    /// One URL value shared by every kept request, so that holding it costs no allocation.
    private static let placeholder = URL(string: "http://haul.invalid/")!
}
