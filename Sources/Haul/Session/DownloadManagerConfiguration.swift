extension DownloadManager {
    /// How a manager schedules, retries and reports. Every default is stated on its property.
    public struct Configuration: Sendable {
        /// Downloads running at once, across all hosts. Default 4.
        public var maxConcurrentDownloads: Int
        /// Downloads running at once against one host; nil (the default) means only the global
        /// limit applies. There is no other, hidden limit.
        public var maxDownloadsPerHost: Int?
        /// Retries for transient failures. Default: 5 retries, backoff 1 s doubling to 30 s.
        public var retry: RetryPolicy
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
        /// Time allowed without receiving a byte. Default 30 s.
        public var readTimeout: Duration
        /// The User-Agent header (a request's own header wins). Default `haul/VERSION`.
        public var userAgent: String
        /// Tests only: makes writes fail (see `WriteFault`).
        /// Whether groups run one after another; `.interleaved` by default.
        public var groupOrder: GroupOrder = .interleaved
        /// Keep started, paused, completed, failed, canceled and group-completed events in the
        /// store until acknowledged (`events(after:)`, `acknowledgeEvents(through:)`), written
        /// in the same transaction as the states they report. What a daemon's session needs;
        /// off by default.
        public var keepsEventOutbox = false
        var writeFault: WriteFault?

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
            userAgent: String = "haul/\(HaulVersion.current)"
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
        }
    }
}

/// The version of this library and of the `haul` tool.
public enum HaulVersion {
    public static let current = "0.1.0"
}
