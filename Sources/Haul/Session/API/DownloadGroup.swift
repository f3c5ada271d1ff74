import Foundation

/// A named batch of downloads of a session: its members' results as they finish, and one
/// completion for all of them.
///
/// ```swift
/// let lesson = try await session.add(shards, toGroup: "lesson-42", ifPresent: .continue)
/// for try await result in lesson.results {            // each member as it finishes
///     if let file = result.file { index(file.url) }
/// }
/// let summary = try await lesson.completion            // every member with its file or error
/// ```
///
/// A handle is a small value naming the group in its session; `DownloadSession.group(named:)`
/// makes one again from the name (after a restart, too).
public struct DownloadGroup: Sendable, Hashable {
    /// The group's name in its session.
    public let name: String
    let session: any SessionBackend

    init(name: String, session: any SessionBackend) {
        self.name = name
        self.session = session
    }

    /// Waits until every member has finished (completed, failed or canceled) and returns the
    /// summary, where each member has its file or its error; returns at once if that is so.
    /// Throws `.waitCanceled` when the awaiting task is canceled, `.shutdown` when the session
    /// closes first.
    public var completion: GroupSummary {
        get async throws(HaulError) { try await session.waitUntilCompleted(group: name) }
    }

    /// Every member's result: those already finished first, then each as it finishes. Ends
    /// once the group has completed (or the iterating task is canceled).
    public var results: HaulSequence<DownloadResult> {
        session.results(ofGroup: name)
    }

    /// The group's members by outcome now, without waiting (those not finished are in
    /// `GroupSummary.unfinished`).
    public func summary() async throws(HaulError) -> GroupSummary {
        try await session.summary(ofGroup: name)
    }

    /// The members' progress summed now; the expected total is known when every member's is.
    public func progress() async throws(HaulError) -> TransferProgress {
        try await session.progress(ofGroup: name)
    }

    /// The members, in the order they were added.
    public func downloads() async throws(HaulError) -> [DownloadInfo] {
        try await session.members(ofGroup: name)
    }

    public static func == (lhs: DownloadGroup, rhs: DownloadGroup) -> Bool {
        lhs.name == rhs.name && lhs.session === rhs.session
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
