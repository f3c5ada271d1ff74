/// A group's members and how each ended: every finished member with its file or its error.
///
/// What `DownloadGroup.completion` returns once every member has finished, and what
/// `DownloadEvent.Kind.groupCompleted` carries. `summary()` gives one at any time, with the
/// members that have not finished in `unfinished`.
///
/// ```swift
/// let summary = try await group.completion
/// if summary.succeeded { try unpack(summary.files) }
/// for result in summary.failed { log(result.id, result.error!) }
/// ```
public struct GroupSummary: Sendable, Hashable {
    /// The group's name.
    public let name: String
    /// Every finished member, in the order members were added.
    public let results: [DownloadResult]
    /// Members not finished yet (queued, running or paused), in the order they were added.
    /// Empty in a completed group's summary.
    public let unfinished: [DownloadID]

    /// A summary (sessions make these; tests and previews may too).
    public init(name: String, results: [DownloadResult], unfinished: [DownloadID] = []) {
        self.name = name
        self.results = results
        self.unfinished = unfinished
    }

    /// Members that completed (skipped ones included).
    public var completed: [DownloadResult] { results.filter { $0.file != nil } }
    /// Members that failed; each `error` says why.
    public var failed: [DownloadResult] { results.filter { $0.error != nil } }
    /// Members that were canceled.
    public var canceled: [DownloadResult] { results.filter { $0.outcome == .canceled } }
    /// The placed files of the members that completed, in the order members were added.
    public var files: [DownloadedFile] { results.compactMap(\.file) }
    /// True when every member has finished.
    public var isComplete: Bool { unfinished.isEmpty }
    /// True when every member completed.
    public var succeeded: Bool { unfinished.isEmpty && results.allSatisfy { $0.file != nil } }
    /// How many members the group has.
    public var count: Int { results.count + unfinished.count }
}
