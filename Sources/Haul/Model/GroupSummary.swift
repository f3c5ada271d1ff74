/// The result of a group once every member has finished: what succeeded, what failed and why.
public struct GroupSummary: Sendable, Hashable {
    public let name: String
    /// Members that completed (including skipped ones).
    public let completed: [DownloadInfo]
    /// Members that failed; each carries its `error`.
    public let failed: [DownloadInfo]
    /// Members that were canceled.
    public let canceled: [DownloadInfo]
    /// Members still queued or paused. Empty when the group finished; non-empty only when the
    /// summary was given because the manager shut down first.
    public let unfinished: [DownloadInfo]

    public init(name: String, completed: [DownloadInfo], failed: [DownloadInfo], canceled: [DownloadInfo], unfinished: [DownloadInfo] = []) {
        self.name = name
        self.completed = completed
        self.failed = failed
        self.canceled = canceled
        self.unfinished = unfinished
    }

    /// True when every member completed.
    public var succeeded: Bool { failed.isEmpty && canceled.isEmpty && unfinished.isEmpty }
    /// Total number of members.
    public var count: Int { completed.count + failed.count + canceled.count + unfinished.count }
}
