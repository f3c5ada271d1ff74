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

    /// The options that the manager does not apply yet and the RPC layer only remembers.
    var hasPendingOptions: Bool {
        split != nil || maxConnectionPerServer != nil || maxDownloadLimit != nil
    }

    /// The options that change a download's request.
    var changesRequest: Bool {
        dir != nil || out != nil || headers != nil || checksum != nil || allowOverwrite != nil
            || autoFileRenaming != nil || referer != nil || userAgent != nil
    }
}

/// Options the manager cannot apply yet (per-download speed limits and connections are being
/// added to the engine). The RPC layer keeps them per download so that `getOption` answers
/// what was asked, and applies them once the engine can.
struct Aria2PendingOptions: Sendable, Hashable {
    var split: Int?
    var maxConnectionPerServer: Int?
    var maxDownloadLimit: Int64?

    mutating func merge(_ values: Aria2OptionValues) {
        if let split = values.split { self.split = split }
        if let connections = values.maxConnectionPerServer { maxConnectionPerServer = connections }
        if let limit = values.maxDownloadLimit { maxDownloadLimit = limit }
    }
}
