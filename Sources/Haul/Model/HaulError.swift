/// The one error type Haul throws and reports.
///
/// Modelled on AsyncHTTPClient's `HTTPClientError`: a struct wrapping a private code enum, so
/// that new kinds of failure can be added without breaking anyone who switches over codes.
/// Every error carries a message written for the person reading the terminal or the log.
public struct HaulError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is. Compare with the static members, e.g. `error.code == .diskFull`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Sendable {
            case invalidURL, unsupportedScheme, invalidRequest, invalidFileName
            case directoryNotFound, permissionDenied, fileExists, fileSystem, diskFull
            case httpStatus, checksumMismatch, lengthMismatch, invalidResponse
            case tooManyRedirects, redirectLoop, unsupportedRedirect
            case connectionFailed, timeout, certificate, deadlineExceeded, unsupportedProxy
            case invalidState, unknownDownload, unknownGroup, canceled, waitCanceled, shutdown
            case daemonUnavailable, rpcError
        }
        let base: Base
        private init(_ base: Base) { self.base = base }

        /// The URL could not be parsed or has no host.
        public static let invalidURL = Code(.invalidURL)
        /// The URL's scheme is not http or https.
        public static let unsupportedScheme = Code(.unsupportedScheme)
        /// The request contradicts itself (for example an empty header name).
        public static let invalidRequest = Code(.invalidRequest)
        /// A file name given by the user cannot be used safely (contains `/`, is `..`, …).
        public static let invalidFileName = Code(.invalidFileName)
        /// The destination directory does not exist or is not a directory.
        public static let directoryNotFound = Code(.directoryNotFound)
        /// The destination directory or file cannot be written.
        public static let permissionDenied = Code(.permissionDenied)
        /// The final file exists and the conflict policy is `.fail`.
        public static let fileExists = Code(.fileExists)
        /// Any other file-system failure (open, write, rename, fsync).
        public static let fileSystem = Code(.fileSystem)
        /// The disk is full (ENOSPC, EDQUOT); durable bytes are kept.
        public static let diskFull = Code(.diskFull)
        /// The server answered with a status >= 400 (or another status Haul cannot use).
        public static let httpStatus = Code(.httpStatus)
        /// The downloaded bytes do not match an expected checksum.
        public static let checksumMismatch = Code(.checksumMismatch)
        /// The server sent fewer or more bytes than it announced.
        public static let lengthMismatch = Code(.lengthMismatch)
        /// The response cannot be used (for example a Content-Range that does not match the request).
        public static let invalidResponse = Code(.invalidResponse)
        /// More redirects than the configured limit.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// A redirect chain came back to a URL it had already visited.
        public static let redirectLoop = Code(.redirectLoop)
        /// A redirect pointed to a scheme other than http or https, or had no usable Location.
        public static let unsupportedRedirect = Code(.unsupportedRedirect)
        /// The connection could not be made, or broke.
        public static let connectionFailed = Code(.connectionFailed)
        /// Connecting or reading took longer than the configured timeout.
        public static let timeout = Code(.timeout)
        /// TLS could not be established: the server's certificate is not trusted (unknown or
        /// private CA, expired, self-signed), does not name the host, or a client certificate
        /// or key could not be used. Not transient: trying again cannot change a certificate.
        public static let certificate = Code(.certificate)
        /// The proxy cannot be used as given: not a proxy URL, a kind Haul cannot speak (SOCKS4,
        /// an https:// proxy), SOCKS with a user name and password (AsyncHTTPClient's SOCKS
        /// client offers no authentication), or a server that does not answer as that kind of
        /// proxy. Not transient, and never a reason to connect directly instead.
        public static let unsupportedProxy = Code(.unsupportedProxy)
        /// A download kept failing with transient errors until its resource deadline passed
        /// (`RetryPolicy.waitLimit`); the last of those errors is in the message.
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// The operation is not possible in the download's current state (e.g. resuming a completed download).
        public static let invalidState = Code(.invalidState)
        /// No download with that ID is known to this session.
        public static let unknownDownload = Code(.unknownDownload)
        /// No group with that name is known to this session.
        public static let unknownGroup = Code(.unknownGroup)
        /// The download was canceled.
        public static let canceled = Code(.canceled)
        /// The task that waited for a result (`Download.value`, `DownloadGroup.completion`) was
        /// canceled before the result came. The download itself goes on: canceling a wait is
        /// not canceling the download (that is `DownloadSession.cancel(_:)`).
        public static let waitCanceled = Code(.waitCanceled)
        /// The manager is shutting down or has shut down.
        public static let shutdown = Code(.shutdown)
        /// No `haul daemon` answers at the socket or URL a client was given (none is running,
        /// or it stopped while the call was in flight).
        public static let daemonUnavailable = Code(.daemonUnavailable)
        /// The daemon answered a JSON-RPC call with an error object (its number is in
        /// `HaulError.rpcCode`), or refused the call (a request too large, a wrong secret).
        public static let rpcError = Code(.rpcError)

        public var description: String { base.rawValue }

        /// The code with this name (its `description`), as stored or sent over RPC.
        public init?(named name: String) {
            guard let base = Base(rawValue: name) else { return nil }
            self.base = base
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for people: what went wrong, and where.
    public let message: String
    /// The HTTP status, for `.httpStatus` errors.
    public let httpStatus: Int?
    /// How long the server asked us to wait before retrying (`Retry-After`), if it said.
    public let retryAfter: Duration?
    /// The JSON-RPC error number the daemon answered with (aria2's numbers, or -32700…-32600
    /// from JSON-RPC itself), for errors that came back from a remote call.
    public let rpcCode: Int?
    /// The error Haul caught when this one has a cause of its own: the NIO, TLS, SOCKS or
    /// AsyncHTTPClient error behind `.connectionFailed`, `.timeout` or `.certificate`, the
    /// `errno` behind a file-system error (as `POSIXError`), the SQLite error behind a store
    /// failure. For logs and diagnosis: `code` and `message` say what happened. Kept in the
    /// process that caught it only; errors that crossed the daemon's JSON-RPC have none, and
    /// it takes no part in `==`.
    public let underlying: (any Error)?

    /// An error of `code` with a message for people; `underlying` is the caught error behind it.
    public init(
        _ code: Code, _ message: String, httpStatus: Int? = nil, retryAfter: Duration? = nil, rpcCode: Int? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
        self.rpcCode = rpcCode
        self.underlying = underlying
    }

    /// The same error with `cause` as its underlying error.
    package func causedBy(_ cause: (any Error)?) -> HaulError {
        HaulError(code, message, httpStatus: httpStatus, retryAfter: retryAfter, rpcCode: rpcCode, underlying: cause)
    }

    /// Equal when code, message, status, Retry-After and RPC number are; the underlying error
    /// (which need not be equatable) is not compared.
    public static func == (lhs: HaulError, rhs: HaulError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.httpStatus == rhs.httpStatus
            && lhs.retryAfter == rhs.retryAfter && lhs.rpcCode == rhs.rpcCode
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(httpStatus)
    }

    /// Whether trying again later may succeed: broken connections, timeouts, short bodies,
    /// and the statuses that mean "not now" (408, 429, 5xx).
    public var isTransient: Bool {
        switch code.base {
        case .connectionFailed, .timeout, .lengthMismatch:
            return true
        case .httpStatus:
            guard let status = httpStatus else { return false }
            return status == 408 || status == 429 || (500...599).contains(status)
        default:
            return false
        }
    }

    /// `code: message`, as the CLI prints it.
    public var description: String { "\(code): \(message)" }

    /// The description, then the underlying error when there is one.
    public var debugDescription: String {
        guard let underlying else { return description }
        return "\(description) (caused by \(String(reflecting: underlying)))"
    }
}
