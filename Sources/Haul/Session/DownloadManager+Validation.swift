import Foundation

/// What `add` refuses before it writes anything: bad URLs, headers and destination
/// directories, each answered with a clear `HaulError`.
extension DownloadManager {
    /// Checks requests the way `add` does, without adding them: a caller can refuse bad
    /// input before it opens anything. Without `checkingDirectories`, the destination
    /// directories are not asked about (a caller that makes them checks the rest first).
    package static func validate(_ requests: [DownloadRequest], checkingDirectories: Bool = true) throws(HaulError) {
        // A batch nearly always shares one directory: ask the file system about it once.
        var checkedDirectory: URL?
        for request in requests {
            try validate(request, directoryChecked: !checkingDirectories || request.directory == checkedDirectory)
            checkedDirectory = request.directory
        }
    }

    static func validate(_ request: DownloadRequest, directoryChecked: Bool = false) throws(HaulError) {
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard !scheme.isEmpty, request.url.host?.isEmpty == false || scheme != "http" && scheme != "https" else {
            throw HaulError(.invalidURL, "'\(request.url.absoluteString)' is not a valid URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw HaulError(.unsupportedScheme, "'\(request.url.absoluteString)': only http and https are supported")
        }
        try request.validateMirrors()
        if let name = request.fileName { try FileNaming.validateUserFileName(name) }
        for header in request.headers {
            guard !header.name.isEmpty, !header.name.contains(where: { $0.isWhitespace || $0 == ":" }),
                  !header.value.contains(where: \.isNewline)
            else { throw HaulError(.invalidRequest, "invalid header '\(header.name)'") }
        }
        guard !directoryChecked else { return }
        try validateDirectory(request.directory)
    }

    /// The directory checks of `validate(_:)` alone, for a batch whose other checks passed
    /// (`checkingDirectories: false`) and whose directories were made since: the other checks
    /// again would only repeat their answer (and parse each URL's host once more).
    package static func validateDirectories(of requests: [DownloadRequest]) throws(HaulError) {
        var checkedDirectory: URL?
        for request in requests where request.directory != checkedDirectory {
            try validateDirectory(request.directory)
            checkedDirectory = request.directory
        }
    }

    private static func validateDirectory(_ url: URL) throws(HaulError) {
        let directory = url.path
        let status = SystemCalls.directoryStatus(directory)
        guard status.exists else { throw HaulError(.directoryNotFound, "\(directory) does not exist or is not a directory") }
        guard status.writable else { throw HaulError(.permissionDenied, "\(directory) is not writable") }
    }
}
