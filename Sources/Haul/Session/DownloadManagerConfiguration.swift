import CoreMetrics
import Logging

extension DownloadManager {
    /// How a manager schedules, retries and reports. Every default is stated on its property.
    public struct Configuration: Sendable {
        /// Downloads fetching at once, across all hosts. Default 4.
        ///
        /// A download whose bytes are all received and verified gives its slot to the next one
        /// while its file is recorded and moved into place (a few milliseconds), so that a batch
        /// of small files keeps every connection busy; a few more than this may therefore show
        /// as running for that moment.
        public var maxConcurrentDownloads: Int
        /// Downloads fetching at once against one host; nil (the default) means only the global
        /// limit applies. There is no other, hidden limit.
        public var maxDownloadsPerHost: Int?
        /// Retries for transient failures. Default: 5 retries, backoff 1 s doubling to 30 s,
        /// then failure; `RetryPolicy.background` waits for the server up to 7 days.
        public var retry: RetryPolicy
        /// Trusted CAs, certificate checking and a client certificate, for every HTTPS
        /// connection of the manager. Default: the system's CAs, checked; no client certificate.
        public var tls = TLSSettings()
        /// The proxies (HTTP or SOCKS5) for http and https URLs, and the hosts reached directly.
        /// Default: none (`ProxySettings.fromEnvironment` reads curl's variables; `haul get` and
        /// `haul daemon` use them). A proxy that cannot be used fails the downloads meant for
        /// it with `.unsupportedProxy`; they never go out directly.
        public var proxy = ProxySettings.direct
        /// Redirects followed before giving up. Default 10.
        public var redirectLimit: Int
        /// How often progress events are emitted. Default 250 ms.
        public var progressInterval: Duration
        /// Flush the part file and record its durable offset after this many bytes. Default 16 MiB.
        public var checkpointBytes: Int64
        /// …or after this long, whichever comes first. Default 5 s.
        public var checkpointInterval: Duration
        /// Files at least this large are flushed to disk before they are placed; smaller ones
        /// are not, so that thousands of small files do not cost thousands of fsyncs.
        /// Default: `checkpointBytes`. Set 0 to flush every file.
        public var syncBeforePlacementThreshold: Int64
        /// Time allowed to connect. Default 15 s.
        public var connectTimeout: Duration
        /// Time allowed without receiving a byte, not counting time a transfer holds its reads
        /// back (speed-limit waits, checkpoint flushes, hashing, placement). Checked at every
        /// `progressInterval`. Default 30 s.
        public var readTimeout: Duration
        /// The User-Agent header (a request's own header wins). Default `haul/VERSION`.
        public var userAgent: String
        /// Connections a download is split over when the server allows it and its request does
        /// not say (aria2's `--split`). Default 5, as aria2; capped by `maxConnectionsPerServer`,
        /// whose default of 1 keeps splitting off until it is raised.
        ///
        /// A download is split only when the first response offers byte ranges
        /// (`Accept-Ranges: bytes`) with a strong validator, identity coding and a known length,
        /// and the length is at least twice `minSegmentSize`. Otherwise one connection does it.
        public var split: Int
        /// Most connections of one download (aria2's `--max-connection-per-server`). Default 1.
        public var maxConnectionsPerServer: Int
        /// No segment is planned smaller than this (aria2's `--min-split-size`). Default 20 MiB.
        public var minSegmentSize: Int64
        /// In a split download, a connection that has received nothing for this long, while
        /// another connection of the download has nothing left to do, hands that one the rest of
        /// its segment and its request is dropped: one stalled connection does not hold the last
        /// bytes until the whole download falls silent for `readTimeout`. Time a connection holds
        /// its reads back (speed-limit waits, checkpoint flushes) does not count. Default 5 s.
        public var stalledConnectionTimeout: Duration
        /// A speed limit for all downloads of the manager together, in bytes per second
        /// (aria2's `--max-overall-download-limit`); nil (the default) for none.
        /// `DownloadManager.setGlobalSpeedLimit(_:)` changes it while transfers run.
        public var maxBytesPerSecond: Int64?
        /// A global limit shared with other managers, so that one limit holds for all of them
        /// together (a daemon's sessions under its `--max-overall-download-limit`). When set, it
        /// is this manager's global limit and `maxBytesPerSecond` is not used; the manager's
        /// `setGlobalSpeedLimit(_:)` then changes it for every manager that shares it.
        /// Default nil: each manager has its own.
        package var sharedSpeedLimiter: SpeedLimiter?
        /// Whether groups run one after another; `.interleaved` by default.
        public var groupOrder: GroupOrder = .interleaved
        /// Keep started, paused, completed, failed, canceled and group-completed events in the
        /// store until acknowledged (`events(after:)`, `acknowledgeEvents(through:)`), written
        /// in the same transaction as the states they report. What a daemon's session needs;
        /// off by default.
        public var keepsEventOutbox = false
        /// How many finished downloads the session keeps, and for how long (see `Retention`).
        /// Default: the 1,000 that finished last, as aria2 keeps.
        public var retention = Retention()
        /// Where the manager logs the decisions it makes, each with the download's ID as
        /// `haul.download` metadata: a restart from zero and why (notice), retries and waits for
        /// a server (info), a failure or a pause for a reason (warning), placement (debug).
        /// Default: nowhere (a logger whose handler drops everything), as AsyncHTTPClient does;
        /// pass your own to see them.
        public var logger = Logger(label: "haul", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Tests only: makes writes fail (see `WriteFault`).
        var writeFault: WriteFault?
        /// Whether every part of a download's directory is opened without following a symbolic
        /// link. `haul daemon` sets it: it resolves each directory when the download is added,
        /// so a link found in one later was put there since (a directory swapped for a link to
        /// elsewhere) and the download fails instead of writing there. Off by default: a
        /// user's own directory may well be reached through a link.
        package var refusesLinksInDirectories = false
        /// What the manager's timers sleep on: retry backoff and waits for a server, the
        /// progress ticker's interval, the store's batching timers, and waits for stored
        /// events. Default the continuous clock; a test passes one it drives itself. The
        /// watchdog's silence and the speed meter still read `ContinuousClock.now`, as the
        /// transfers that report to them do.
        package var clock: any Clock<Duration> = ContinuousClock()
        /// Where the manager's instruments are made (downloads by state, bytes received,
        /// retries, waits for a server, failures, store write times; docs/metrics.md). Default
        /// nil: the process's `MetricsSystem.factory` as the manager starts, which does nothing
        /// unless the app bootstrapped a backend. `haul daemon` passes its own Prometheus
        /// factory, so that several daemons in one process (tests) keep their figures apart.
        package var metricsFactory: (any MetricsFactory)?
        /// Membership of a fleet of daemons sharing a PostgreSQL store (`docs/fleet.md`): the
        /// manager claims its downloads by lease instead of scheduling them locally. Nil (the
        /// default, and always with SQLite): the manager schedules its session alone.
        package var fleet: FleetMembership?

        /// A configuration; every default is stated on its property.
        public init(
            maxConcurrentDownloads: Int = 4,
            maxDownloadsPerHost: Int? = nil,
            retry: RetryPolicy = RetryPolicy(),
            redirectLimit: Int = 10,
            progressInterval: Duration = .milliseconds(250),
            checkpointBytes: Int64 = 16 << 20,
            checkpointInterval: Duration = .seconds(5),
            syncBeforePlacementThreshold: Int64? = nil,
            connectTimeout: Duration = .seconds(15),
            readTimeout: Duration = .seconds(30),
            userAgent: String = "haul/\(HaulVersion.current)",
            split: Int = 5,
            maxConnectionsPerServer: Int = 1,
            minSegmentSize: Int64 = 20 << 20,
            maxBytesPerSecond: Int64? = nil,
            stalledConnectionTimeout: Duration = .seconds(5)
        ) {
            self.maxConcurrentDownloads = maxConcurrentDownloads
            self.maxDownloadsPerHost = maxDownloadsPerHost
            self.retry = retry
            self.redirectLimit = redirectLimit
            self.progressInterval = progressInterval
            self.checkpointBytes = checkpointBytes
            self.checkpointInterval = checkpointInterval
            self.syncBeforePlacementThreshold = syncBeforePlacementThreshold ?? checkpointBytes
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.userAgent = userAgent
            self.split = split
            self.maxConnectionsPerServer = maxConnectionsPerServer
            self.minSegmentSize = minSegmentSize
            self.maxBytesPerSecond = maxBytesPerSecond
            self.stalledConnectionTimeout = stalledConnectionTimeout
        }
    }
}

extension DownloadManager.Configuration {
    var segmentation: SegmentationSettings {
        SegmentationSettings(
            split: max(1, split), maxConnectionsPerServer: max(1, maxConnectionsPerServer),
            minSegmentSize: max(1, minSegmentSize), stalledConnectionTimeout: max(.milliseconds(1), stalledConnectionTimeout))
    }

    /// The HTTP client's settings. Its per-host connection pool must hold every connection
    /// the scheduler may open to one host (downloads times their connections), or it would
    /// queue requests, and a queued request fails after the connect timeout: a hidden cap.
    /// The pool is fixed when the manager starts, but `setMaxConcurrentDownloads` may raise
    /// the downloads later, so it is never sized below `minimumConnectionsPerHost`. The room
    /// is not free: AsyncHTTPClient reserves a record (some tens of bytes) per allowed
    /// connection, up to 1024, in each host's pool, and keeps a pool per host until shutdown.
    var transport: HTTPTransport.Configuration {
        HTTPTransport.Configuration(
            connectTimeout: connectTimeout,
            redirectLimit: redirectLimit,
            userAgent: userAgent,
            tls: tls,
            proxy: proxy,
            connectionsPerHost: max(
                Self.minimumConnectionsPerHost, (maxDownloadsPerHost ?? maxConcurrentDownloads) * max(1, maxConnectionsPerServer)))
    }

    /// The least room of the HTTP client's pool for one host (see `transport`).
    static let minimumConnectionsPerHost = 1024
}

extension TransferRunner {
    /// The runner a manager with `configuration` uses.
    init(transport: HTTPTransport, configuration: DownloadManager.Configuration) {
        self.init(
            transport: transport,
            checkpointBytes: configuration.checkpointBytes,
            checkpointInterval: configuration.checkpointInterval,
            syncBeforePlacementThreshold: configuration.syncBeforePlacementThreshold,
            segmentation: configuration.segmentation,
            globalLimit: configuration.sharedSpeedLimiter ?? SpeedLimiter(bytesPerSecond: configuration.maxBytesPerSecond),
            writeFault: configuration.writeFault, refusesLinksInDirectories: configuration.refusesLinksInDirectories)
    }
}

/// The version of this library and of the `haul` tool.
public enum HaulVersion {
    /// The version, as `haul --version` prints it and the default User-Agent sends it.
    public static let current = "0.1.0"
}
