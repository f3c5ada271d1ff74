/// What a session keeps in the store so that a daemon restarted without any client continues
/// the session's downloads under the same rules.
public struct SessionSettings: Sendable, Hashable, Codable {
    /// Downloads of the session fetching at once.
    public var maxConcurrentDownloads: Int
    /// Downloads of the session fetching at once from one host; nil for no such limit.
    public var maxDownloadsPerHost: Int?
    /// With `.sequential`, no download of a later group starts while one of an earlier group
    /// is queued or running: group A finishes before group B starts.
    public var groupOrder: GroupOrder

    /// Settings: 4 downloads at once, no per-host limit, groups interleaved, unless given.
    public init(maxConcurrentDownloads: Int = 4, maxDownloadsPerHost: Int? = nil, groupOrder: GroupOrder = .interleaved) {
        self.maxConcurrentDownloads = maxConcurrentDownloads
        self.maxDownloadsPerHost = maxDownloadsPerHost
        self.groupOrder = groupOrder
    }
}

/// How the scheduler treats groups.
public enum GroupOrder: String, Sendable, Hashable, Codable, CaseIterable {
    /// Downloads start in priority and enqueue order, whatever their group.
    case interleaved
    /// Groups run one after another, in the order they were created.
    case sequential
}
