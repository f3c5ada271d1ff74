/// The batch the crash test hands to HaulCrashWorker: written by the test, read by the worker,
/// one definition for both.
public struct CrashBatchSpec: Codable, Sendable {
    public struct Group: Codable, Sendable {
        public var name: String
        public var files: [File]

        public init(name: String, files: [File]) {
            self.name = name
            self.files = files
        }
    }

    public struct File: Codable, Sendable {
        public var url: String
        public var name: String
        public var sha256: String
        public var priority: Int

        public init(url: String, name: String, sha256: String, priority: Int) {
            self.url = url
            self.name = name
            self.sha256 = sha256
            self.priority = priority
        }
    }

    public var stateDirectory: String
    public var downloadDirectory: String
    public var checkpointBytes: Int64
    public var checkpointIntervalMilliseconds: Int
    public var maxConcurrentDownloads: Int
    public var groups: [Group]
    /// Connections per download (`split` and `maxConnectionsPerServer`); nil: the library's defaults.
    public var split: Int?
    /// `minSegmentSize` in bytes; nil: the library's default.
    public var minSegmentSize: Int64?

    public init(
        stateDirectory: String, downloadDirectory: String, checkpointBytes: Int64,
        checkpointIntervalMilliseconds: Int, maxConcurrentDownloads: Int, groups: [Group],
        split: Int? = nil, minSegmentSize: Int64? = nil
    ) {
        self.stateDirectory = stateDirectory
        self.downloadDirectory = downloadDirectory
        self.checkpointBytes = checkpointBytes
        self.checkpointIntervalMilliseconds = checkpointIntervalMilliseconds
        self.maxConcurrentDownloads = maxConcurrentDownloads
        self.groups = groups
        self.split = split
        self.minSegmentSize = minSegmentSize
    }
}
