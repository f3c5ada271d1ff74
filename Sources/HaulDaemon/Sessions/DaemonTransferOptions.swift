import Haul

/// How the daemon's downloads fetch: aria2's global transfer options, as `haul daemon` takes
/// them on its command line.
///
/// They hold for every session. Downloads added over aria2's methods start from them and may
/// set their own `split`, `max-connection-per-server` and `max-download-limit`; `haul.*`
/// sessions split their downloads by the same default. The overall limit is one for the whole
/// daemon, all sessions together, as aria2's is for all its downloads.
package struct DaemonTransferOptions: Sendable, Hashable {
    /// Connections a download is split over when the server allows it (aria2's `--split`).
    /// Default 5.
    package var split: Int
    /// Most connections of one download (aria2's `--max-connection-per-server`, 1 to
    /// `connectionCeiling`). Default 1, which keeps splitting off until a download asks.
    package var maxConnectionPerServer: Int
    /// No segment is planned smaller than this (aria2's `--min-split-size`). Default 20 MiB.
    package var minSplitSize: Int64
    /// Each download's own limit in bytes per second, 0 for none (aria2's
    /// `--max-download-limit`): the default of downloads added over aria2's methods.
    package var maxDownloadLimit: Int64
    /// All downloads of the daemon together, in bytes per second, 0 for none (aria2's
    /// `--max-overall-download-limit`).
    package var maxOverallDownloadLimit: Int64
    /// How long connecting may take; nil keeps the library's default (15 s).
    package var connectTimeout: Duration?
    /// How long a transfer may receive nothing before it is stopped and retried; nil keeps the
    /// library's default (30 s).
    package var readTimeout: Duration?

    /// The most connections one download may have, whatever it asks: aria2's upper bound for
    /// `max-connection-per-server`. It is also the cap given to every session's manager, so
    /// that a download's own `split` and `max-connection-per-server` are what count.
    package static let connectionCeiling = 16

    /// The values `split` may take. aria2 sets no upper bound; a download can use no more
    /// than `connectionCeiling` anyway, and a larger number is far more likely a typo. The
    /// same bounds as a decoded `DownloadRequest`'s.
    package static let splitRange = DownloadRequest.splitRange

    package init(
        split: Int = 5, maxConnectionPerServer: Int = 1, minSplitSize: Int64 = 20 << 20,
        maxDownloadLimit: Int64 = 0, maxOverallDownloadLimit: Int64 = 0,
        connectTimeout: Duration? = nil, readTimeout: Duration? = nil
    ) {
        self.split = split
        self.maxConnectionPerServer = maxConnectionPerServer
        self.minSplitSize = minSplitSize
        self.maxDownloadLimit = maxDownloadLimit
        self.maxOverallDownloadLimit = maxOverallDownloadLimit
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
    }

    /// aria2's rule for one download from one server: `split` connections, but no more than
    /// `max-connection-per-server`, and never more than the ceiling.
    package static func connections(split: Int, maxConnectionPerServer: Int) -> Int {
        max(1, min(split, maxConnectionPerServer, connectionCeiling))
    }

    /// Sets what these options decide in a session's manager configuration. A request's own
    /// `split` is capped only by the ceiling; one without gets `connections(split:…)` of the
    /// daemon's defaults. `limiter` is the overall limit, shared by all sessions.
    package func apply(to configuration: inout DownloadManager.Configuration, sharing limiter: SpeedLimiter) {
        configuration.split = Self.connections(split: split, maxConnectionPerServer: maxConnectionPerServer)
        configuration.maxConnectionsPerServer = Self.connectionCeiling
        configuration.minSegmentSize = minSplitSize
        configuration.sharedSpeedLimiter = limiter
        if let connectTimeout { configuration.connectTimeout = connectTimeout }
        if let readTimeout { configuration.readTimeout = readTimeout }
    }
}
