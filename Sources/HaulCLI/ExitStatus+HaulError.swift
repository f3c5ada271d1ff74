import Haul

/// Which exit status each kind of `HaulError` leads to.
///
/// The table is the single source for the code, `haul get --help` and the tests: a new
/// `HaulError.Code` that is not listed here exits with `.failure` (1) until it is added.
extension ExitStatus {
    static let errorCodeTable: [(code: HaulError.Code, status: ExitStatus)] = [
        (.invalidURL, .usage),
        (.unsupportedScheme, .usage),
        (.invalidRequest, .usage),
        (.invalidFileName, .usage),
        (.unsupportedProxy, .usage),
        (.directoryNotFound, .destination),
        (.permissionDenied, .destination),
        (.diskFull, .destination),
        (.fileSystem, .destination),
        (.connectionFailed, .network),
        (.timeout, .network),
        (.deadlineExceeded, .network),
        (.certificate, .certificate),
        (.httpStatus, .httpStatus),
        (.checksumMismatch, .checksumMismatch),
        (.lengthMismatch, .serverMisbehaved),
        (.invalidResponse, .serverMisbehaved),
        (.fileExists, .fileExists),
        (.tooManyRedirects, .redirect),
        (.redirectLoop, .redirect),
        (.unsupportedRedirect, .redirect),
        (.invalidState, .failure),
        (.unknownDownload, .failure),
        (.canceled, .failure),
        (.shutdown, .failure),
    ]

    private static let statusByCode: [HaulError.Code: ExitStatus] = Dictionary(
        errorCodeTable.map { ($0.code, $0.status) }, uniquingKeysWith: { first, _ in first })

    /// The status for one error.
    init(for error: HaulError) {
        self = Self.statusByCode[error.code] ?? .failure
    }

    /// The status for a run whose downloads failed with `errors`: success when there are none,
    /// the kind's own status when they are all of one kind, `.failure` when they are mixed.
    init(forFailures errors: [HaulError]) {
        let statuses = Set(errors.map(ExitStatus.init(for:)))
        if statuses.isEmpty {
            self = .success
        } else if statuses.count == 1, let only = statuses.first {
            self = only
        } else {
            self = .failure
        }
    }

    /// The exit statuses as an aligned text table, for `haul get --help`.
    static var helpTable: String {
        allCases.map { status in
            let number = String(status.rawValue)
            let padded = String(repeating: " ", count: max(0, 4 - number.count)) + number
            return "\(padded)  \(status.meaning)"
        }.joined(separator: "\n")
    }

    /// The `HaulError` codes leading to this status, for documentation.
    var errorCodes: [HaulError.Code] {
        Self.errorCodeTable.filter { $0.status == self }.map(\.code)
    }
}
