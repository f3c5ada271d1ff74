import Haul

/// The aria2 options Haul understands, parsed and checked; nil means "not given".
///
/// aria2 names them in its manual ("Input File" options and the global ones); values arrive
/// as strings and are kept here in their typed form.
struct Aria2OptionValues: Sendable, Hashable {
    /// `dir`: where to save, resolved later against the download directory.
    var dir: String?
    /// `out`: the file name inside `dir`.
    var out: String?
    /// `header`: extra request headers (replaces earlier ones).
    var headers: [HeaderField]?
    /// `checksum`: `TYPE=DIGEST`, aria2's names (`sha-256`) or Haul's (`sha256`).
    var checksum: Checksum?
    /// `split`: connections per download.
    var split: Int?
    /// `max-connection-per-server`.
    var maxConnectionPerServer: Int?
    /// `max-download-limit`: bytes per second for one download, 0 for none.
    var maxDownloadLimit: Int64?
    /// `max-overall-download-limit`: bytes per second for all downloads, 0 for none.
    var maxOverallDownloadLimit: Int64?
    /// `max-concurrent-downloads`.
    var maxConcurrentDownloads: Int?
    /// `allow-overwrite`: replace an existing file of the same name.
    var allowOverwrite: Bool?
    /// `auto-file-renaming`: save as `name (1).ext` when the name is taken.
    var autoFileRenaming: Bool?
    /// `pause`: add the download paused.
    var pause: Bool?
    /// `referer`: sent as the `Referer` header.
    var referer: String?
    /// `user-agent`: sent as the `User-Agent` header.
    var userAgent: String?

    /// Whether the options say how many connections a download may use.
    var asksForConnections: Bool {
        split != nil || maxConnectionPerServer != nil
    }
}

/// A download's `split` and `max-connection-per-server` as it was given them. The manager keeps
/// only the connections they make together (the request's `split`), so the RPC layer keeps
/// these for `getOption`, and to combine a later change of one with the other.
struct Aria2ConnectionOptions: Sendable, Hashable {
    var split: Int?
    var maxConnectionPerServer: Int?

    mutating func merge(_ values: Aria2OptionValues) {
        if let split = values.split { self.split = split }
        if let connections = values.maxConnectionPerServer { maxConnectionPerServer = connections }
    }
}
