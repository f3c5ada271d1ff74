import Foundation
import Haul
import HaulDaemon

/// The downloads one `haul get` asks for: command-line URLs and input-file entries turned into
/// `DownloadRequest`s, with every usage rule checked before anything touches the network.
///
/// Checks that need the file system or the library's own rules (directory exists, file name
/// safe, URL scheme) are left to `DownloadManager.add`, which validates the whole batch before
/// queueing any of it; doing them once, there, keeps the CLI and the library in agreement.
struct DownloadPlan: Sendable {
    /// Where `request.metadata` keeps the directory as the user wrote it, so that messages show
    /// `downloads/a.iso` rather than an absolute path.
    static let displayDirectoryKey = "haul.cli.directory"

    var requests: [DownloadRequest]
    /// The `--header` (and `--http-user`) headers, which playlists and their files get too.
    var sharedHeaders: [HeaderField] = []

    /// The options that shape every request.
    struct Options: Sendable {
        var directory = "."
        var outputName: String?
        var checksums: [String] = []
        var headers: [String] = []
        var conflictPolicy = ConflictPolicy.rename
        /// `--max-download-limit`: every download's own limit, bytes per second (nil: none).
        var maxBytesPerSecond: Int64?
    }

    /// `documents`: how many playlists or Metalink documents come with the URLs (they are
    /// planned later, by `GetRun`); the plan may then have no plain URL at all.
    init(urls: [String], input: [InputEntry], options: Options, documents: Int = 0) throws(CommandFailure) {
        let total = urls.count + input.count
        if documents > 0, options.outputName != nil {
            throw .usage("-o/--output names one file; a playlist or Metalink document names its own files (use -d for the directory)")
        }
        if documents > 0, !options.checksums.isEmpty {
            throw .usage("--checksum applies to one file; a Metalink document carries its own hashes")
        }
        guard total > 0 || documents > 0 else {
            throw .usage("no URLs given; pass them as arguments or with -i FILE")
        }
        if options.outputName != nil, total != 1 {
            throw .usage("-o/--output names one file, but \(total) URLs were given; use out= lines in an input file instead")
        }
        if !options.checksums.isEmpty, total != 1 {
            throw .usage("--checksum applies to one URL, but \(total) were given; use checksum= lines in an input file instead")
        }
        let sharedHeaders = try options.headers.map { text throws(CommandFailure) in try Self.header(text, at: "--header") }
        let sharedChecksums = try options.checksums.map { text throws(CommandFailure) in try Self.checksum(text, at: "--checksum") }

        var requests: [DownloadRequest] = []
        requests.reserveCapacity(total)
        var directories = DirectoryURLs()
        for url in urls {
            var request = try Self.request(
                url: url, at: "argument", directory: directories.place(of: options.directory),
                name: options.outputName,
                headers: sharedHeaders, checksums: sharedChecksums, conflictPolicy: options.conflictPolicy)
            request.maxBytesPerSecond = options.maxBytesPerSecond
            requests.append(request)
        }
        for entry in input {
            // Made only for a message: formatting it for each of 5,000 lines cost more than the rest.
            func place() -> String { "input line \(entry.line)" }
            let headers = try sharedHeaders + entry.headers.map { text throws(CommandFailure) in try Self.header(text, at: place()) }
            let checksums = try sharedChecksums + entry.checksums.map { text throws(CommandFailure) in try Self.checksum(text, at: place()) }
            let directory = entry.directory ?? options.directory
            var request = try Self.request(
                url: entry.url, at: place(), directory: directories.place(of: directory),
                name: entry.outputName ?? options.outputName, headers: headers, checksums: checksums,
                conflictPolicy: options.conflictPolicy)
            request.mirrors = try entry.mirrors.map { text throws(CommandFailure) in
                guard let mirror = URL(string: text), mirror.scheme != nil else {
                    throw .usage("'\(text)' (\(place())) is not a valid URL")
                }
                return mirror
            }
            if let text = entry.split {
                guard let split = Int(text), DaemonTransferOptions.splitRange.contains(split) else {
                    throw .usage("\(place()): split=\(text) is not a number of connections (1 to \(DaemonTransferOptions.splitRange.upperBound))")
                }
                request.split = split
            }
            request.maxBytesPerSecond = options.maxBytesPerSecond
            if let text = entry.maxDownloadLimit {
                guard let rate = Self.byteCount(text) else {
                    throw .usage("\(place()): max-download-limit=\(text) is not a rate such as 512K or 2M (0 for none)")
                }
                request.maxBytesPerSecond = rate > 0 ? rate : nil
            }
            requests.append(request)
        }
        self.requests = requests
        self.sharedHeaders = sharedHeaders
    }

    private static func request(
        url text: String, at place: @autoclosure () -> String, directory: Place, name: String?, headers: [HeaderField],
        checksums: [Checksum], conflictPolicy: ConflictPolicy
    ) throws(CommandFailure) -> DownloadRequest {
        guard let url = URL(string: text), url.scheme != nil else {
            throw .usage("'\(text)' (\(place())) is not a valid URL")
        }
        return DownloadRequest(
            url: url,
            directory: directory.url,
            fileName: name,
            headers: headers,
            checksums: checksums,
            conflictPolicy: conflictPolicy,
            metadata: directory.metadata)
    }

    /// A directory as a file URL, and the metadata that names it as the user wrote it.
    private struct Place {
        let url: URL
        let metadata: [String: String]
    }

    /// Each directory's `Place`, made once: making the URL resolves a relative path against the
    /// working directory, a system call per request otherwise, and one metadata dictionary is
    /// shared by every request into the directory instead of one allocated for each.
    private struct DirectoryURLs {
        private var made: [String: Place] = [:]

        mutating func place(of directory: String) -> Place {
            if let place = made[directory] { return place }
            let place = Place(url: URL(fileURLWithPath: directory, isDirectory: true), metadata: [displayDirectoryKey: directory])
            made[directory] = place
            return place
        }
    }

    /// A byte count as aria2 writes it: digits with an optional `K` or `M` (or `G`) suffix,
    /// powers of 1024 (`512K`, `1M`, `20M`); nil when the text is anything else.
    static func byteCount(_ text: String) -> Int64? {
        let trimmed = text.trimmingBlanks()
        let multipliers: [Character: Int64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var digits = Substring(trimmed)
        var multiplier: Int64 = 1
        if let last = trimmed.last?.lowercased().first, let factor = multipliers[last] {
            multiplier = factor
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits), value >= 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }

    private static func header(_ text: String, at place: String) throws(CommandFailure) -> HeaderField {
        do { return try HeaderField(parsing: text) } catch {
            throw .usage("\(place): \(error.message)")
        }
    }

    private static func checksum(_ text: String, at place: String) throws(CommandFailure) -> Checksum {
        do { return try Checksum(parsing: text) } catch {
            throw .usage("\(place): \(error.message)")
        }
    }
}
