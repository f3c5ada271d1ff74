import Foundation

/// What to do when the final file name is already taken in the destination directory.
public enum ConflictPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Place the file as `name (1).ext`, `name (2).ext`, … (the default; never destroys anything).
    case rename
    /// Replace the existing file atomically.
    case overwrite
    /// Leave the existing file alone and report the download as completed (skipped).
    case skip
    /// Fail with `HaulError.Code.fileExists`.
    case fail
}

/// One HTTP header to send with a request.
public struct HeaderField: Hashable, Sendable, Codable {
    /// The header's name, e.g. `Authorization`.
    public var name: String
    /// The header's value.
    public var value: String

    /// A header, sent as `name: value` (checked when the request is added).
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value` as written on a command line.
    public init(parsing line: String) throws(HaulError) {
        guard let colon = line.firstIndex(of: ":") else {
            throw HaulError(.invalidRequest, "a header is written 'Name: value', got '\(line)'")
        }
        let name = line[..<colon].trimmingBlanks()
        let value = line[line.index(after: colon)...].trimmingBlanks()
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0.isNewline }),
              !value.contains(where: \.isNewline)
        else {
            throw HaulError(.invalidRequest, "'\(line)' is not a valid header")
        }
        self.init(name: name, value: value)
    }
}

/// Everything Haul needs to know to download one file.
///
/// Identity is not the URL: every request added to a manager gets its own `DownloadID`, so the
/// same URL may be downloaded twice (into different names or directories).
public struct DownloadRequest: Sendable, Hashable, Codable {
    /// The http or https URL to fetch.
    public var url: URL
    /// Other URLs of the very same file (mirrors), tried after `url`. A segmented transfer
    /// draws segments from every one that answers with the same length and validator as the
    /// first answer, and a failing one is left for the others (see `MirrorSet`). Headers that
    /// carry credentials (`Authorization`, `Cookie`) are for `url`'s server only; a mirror's
    /// own user info goes to that mirror only. Default: none.
    public var mirrors: [URL]
    /// Extra request headers (authorization, cookies, user agent…).
    public var headers: [HeaderField]
    /// The directory the file is placed in. Haul never writes outside it; it must exist.
    public var directory: URL
    /// The final file name. When nil, Haul uses the server's Content-Disposition name, else the
    /// last path component of the URL, sanitised so that it cannot escape `directory`.
    public var fileName: String?
    /// Digests the bytes must match before the file is placed.
    public var checksums: [Checksum]
    /// Higher runs first; equal priorities run in the order they were added.
    public var priority: Int
    /// What to do when the final name is taken. Default `.rename`.
    public var conflictPolicy: ConflictPolicy
    /// Free-form values the caller wants kept with the download.
    public var metadata: [String: String]
    /// Connections to split this download over when the server allows it (aria2's `split`);
    /// nil uses the manager's `split`. Either way at most `maxConnectionsPerServer`; 1 never splits.
    public var split: Int?
    /// This download's own speed limit in bytes per second (aria2's `max-download-limit`);
    /// nil for none. The manager's global limit applies as well.
    /// `DownloadManager.setSpeedLimit(_:for:)` changes it while the download runs.
    public var maxBytesPerSecond: Int64?
    /// This download's resource deadline: after the quick retries it waits for a server or
    /// network that is gone until this moment, then fails with `.deadlineExceeded`. It
    /// replaces the manager's (`RetryPolicy.waitLimit` and `waitDeadline`), earlier or later,
    /// and makes the download wait even when the manager's policy does not. Default nil: the
    /// manager's policy decides. As there, it ends waiting, not a transfer under way. In JSON
    /// (the daemon's `haul.add`) an ISO 8601 date: `"2026-12-01T18:00:00Z"`.
    public var waitDeadline: Date?

    /// A request; every default is stated on its property.
    public init(
        url: URL,
        directory: URL,
        fileName: String? = nil,
        headers: [HeaderField] = [],
        checksums: [Checksum] = [],
        priority: Int = 0,
        conflictPolicy: ConflictPolicy = .rename,
        metadata: [String: String] = [:],
        split: Int? = nil,
        maxBytesPerSecond: Int64? = nil,
        mirrors: [URL] = [],
        waitDeadline: Date? = nil
    ) {
        self.url = url
        self.mirrors = mirrors
        self.directory = directory
        self.fileName = fileName
        self.headers = headers
        self.checksums = checksums
        self.priority = priority
        self.conflictPolicy = conflictPolicy
        self.metadata = metadata
        self.split = split
        self.maxBytesPerSecond = maxBytesPerSecond
        self.waitDeadline = waitDeadline
    }

    /// `url`, then each mirror not already listed: every URL the bytes may come from, in order.
    public var urls: [URL] {
        guard !mirrors.isEmpty else { return [url] }
        var seen: Set<String> = [url.absoluteString]
        return [url] + mirrors.filter { seen.insert($0.absoluteString).inserted }
    }

    /// Makes `newURL` the request's URL. Credentials and cookies in `headers` were given for
    /// the server of the URL they came with: when `newURL` is on another server (host or port),
    /// they are dropped rather than sent there, as after a redirect. Mirrors on the old server
    /// lose them too; a caller that means them for the new server sets them again.
    public mutating func moveURL(to newURL: URL) {
        headers = HTTPTransport.headers(headers, from: url, to: newURL)
        url = newURL
    }

    /// Mirrors are http or https URLs with a host, as `url` must be.
    func validateMirrors() throws(HaulError) {
        for mirror in mirrors {
            let scheme = mirror.scheme?.lowercased() ?? ""
            guard scheme == "http" || scheme == "https" else {
                throw HaulError(.unsupportedScheme, "mirror '\(mirror.absoluteString)': only http and https are supported")
            }
            guard mirror.host?.isEmpty == false else {
                throw HaulError(.invalidURL, "mirror '\(mirror.absoluteString)' is not a valid URL")
            }
        }
    }

    /// The same request with its directory made absolute and standardised, so that
    /// `URL(fileURLWithPath: ".")` and the path it stands for are one destination.
    var normalized: DownloadRequest {
        var copy = self
        copy.directory = Self.normalizedDirectory(directory)
        return copy
    }

    /// `directory` made absolute and standardised (see `normalized`).
    static func normalizedDirectory(_ directory: URL) -> URL {
        URL(fileURLWithPath: directory.standardizedFileURL.path, isDirectory: true)
    }
}

/// Normalises the directories of a batch of requests with one URL per distinct directory:
/// 100,000 requests into one folder share one `URL`, not 100,000 copies of it.
struct DirectoryCache {
    private var normalized: [URL: URL] = [:]
    /// The directory asked last, with its normalised form: a batch nearly always shares one,
    /// found by comparing, not by hashing a `URL` for every request.
    private var last: (directory: URL, normalized: URL)?

    mutating func normalized(_ request: DownloadRequest) -> DownloadRequest {
        var copy = request
        copy.directory = directory(of: request)
        return copy
    }

    /// `normalized(request).directory`, without copying the request.
    mutating func directory(of request: DownloadRequest) -> URL {
        let directory = request.directory
        if let last, last.directory == directory { return last.normalized }
        let result: URL
        if let known = normalized[directory] {
            result = known
        } else {
            result = DownloadRequest.normalizedDirectory(directory)
            normalized[directory] = result
        }
        last = (directory, result)
        return result
    }
}

/// The identities of a batch of requests (see `RequestIdentity`), with each distinct
/// directory standardised once.
struct IdentityCache {
    private var paths: [URL: String] = [:]
    /// The directory asked last: a batch nearly always shares one, found by comparing, not hashing.
    private var last: (directory: URL, path: String)?

    mutating func identity(of request: KeptRequest) -> RequestIdentity {
        request.identity(directoryPath: path(of: request.directory))
    }

    /// `identity(of: KeptRequest(request))` for `request` with `directory` (its normalised
    /// one), without copying the whole request first: a re-run's look-up asks it of every
    /// request of the batch.
    mutating func identity(ofRequest request: DownloadRequest, directory: URL) -> RequestIdentity {
        RequestIdentity(
            url: request.url.absoluteString, directory: path(of: directory),
            fileName: request.fileName, checksums: RequestIdentity.canonical(request.checksums))
    }

    private mutating func path(of directory: URL) -> String {
        if let last, last.directory == directory { return last.path }
        let path: String
        if let known = paths[directory] {
            path = known
        } else {
            path = directory.standardizedFileURL.path
            paths[directory] = path
        }
        last = (directory, path)
        return path
    }
}

/// What makes two requests the same download: the bytes asked for and where they go (the
/// URL, the standardised directory, the file name and the checksums). Headers (tokens change
/// between runs), priority and metadata are not part of it.
struct RequestIdentity: Hashable, Sendable {
    let url: String
    let directory: String
    let fileName: String?
    let checksums: [Checksum]

    /// Checksums as an identity holds them: sorted when several, so that their order does not matter.
    static func canonical(_ checksums: [Checksum]) -> [Checksum] {
        checksums.count < 2 ? checksums : checksums.sorted { $0.description < $1.description }
    }
}
