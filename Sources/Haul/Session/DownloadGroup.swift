/// A named batch of downloads with aggregate progress and one completion for all of them.
///
/// ```swift
/// let group = try await manager.add(requests, toGroup: "photos")
/// let summary = await group.completion
/// print(summary.completed.count, "done,", summary.failed.count, "failed")
/// ```
public struct DownloadGroup: Sendable, Hashable {
    public let name: String
    let manager: DownloadManager

    /// Returns once every member has finished (completed, failed or canceled), with what
    /// succeeded and what failed and why. Returns at once if that is already so. If the
    /// manager shuts down first, returns then, with the rest in `GroupSummary.unfinished`.
    public var completion: GroupSummary {
        get async { await manager.groupCompletion(name) }
    }

    /// Aggregate progress of the members now.
    public func progress() async -> TransferProgress {
        await manager.groupProgress(name)
    }

    /// The members, in the order they were added.
    public func downloads() async -> [DownloadInfo] {
        await manager.groupMembers(name)
    }

    public static func == (lhs: DownloadGroup, rhs: DownloadGroup) -> Bool {
        lhs.name == rhs.name && lhs.manager === rhs.manager
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The manager's bookkeeping for one group.
struct GroupRecord: Sendable {
    let name: String
    /// Creation order, for sequential group scheduling.
    let ordinal: Int32
    var members: [DownloadID] = []
    /// Members not yet finished.
    var unfinished = 0
    var waiters: [CheckedContinuation<GroupSummary, Never>] = []

    init(name: String, ordinal: Int32) {
        self.name = name
        self.ordinal = ordinal
    }

}

extension DownloadManager {
    func groupCompletion(_ name: String) async -> GroupSummary {
        guard let group = groups[name], group.unfinished > 0, !isShutDown else { return summary(of: name) }
        return await withCheckedContinuation { continuation in
            groups.wait(for: name, continuation)
        }
    }

    func groupMembers(_ name: String) -> [DownloadInfo] {
        (groups[name]?.members ?? []).compactMap { records[$0]?.info }
    }

    func groupProgress(_ name: String) -> TransferProgress {
        aggregate(groups[name]?.members ?? [])
    }

    func groupMemberFinished(_ id: DownloadID) {
        guard let name = groupOf(id), let waiters = groups.memberFinished(in: name) else { return }
        let summary = summary(of: name)
        hub.emit(.groupCompleted(summary))
        for waiter in waiters { waiter.resume(returning: summary) }
        groupCompletedForRetention(name)
    }

    /// At shutdown nothing will finish any more: answer everyone still waiting.
    func releaseAllWaiters() {
        for (name, waiters) in groups.takeAllWaiters() {
            let summary = summary(of: name)
            for waiter in waiters { waiter.resume(returning: summary) }
        }
        for id in order {
            guard let record = records[id], !record.details.finishWaiters.isEmpty else { continue }
            records[id]?.details.finishWaiters = []
            for waiter in record.details.finishWaiters { waiter.resume(returning: record.info) }
        }
    }

    func groupMemberReopened(_ id: DownloadID) {
        guard let name = groupOf(id) else { return }
        groups.memberReopened(in: name)
    }

    func summary(of name: String) -> GroupSummary {
        let members = groupMembers(name)
        return GroupSummary(
            name: name,
            completed: members.filter { $0.state == .completed },
            failed: members.filter { $0.state == .failed },
            canceled: members.filter { $0.state == .canceled },
            unfinished: members.filter { !$0.state.isTerminal })
    }

    /// Sums progress; the expected total is known only when every member's is.
    func aggregate(_ ids: [DownloadID]) -> TransferProgress {
        var total = TransferProgress(completedBytes: 0, expectedBytes: 0, bytesPerSecond: 0)
        for id in ids {
            // Only the progress is read: copying whole records here, for every member on
            // every tick, was the main cost of a run with thousands of downloads.
            guard let progress = records.progress(of: id) else { continue }
            total.completedBytes += progress.completedBytes
            total.bytesPerSecond += progress.bytesPerSecond
            if let expected = progress.expectedBytes, let sum = total.expectedBytes {
                total.expectedBytes = sum + expected
            } else {
                total.expectedBytes = nil
            }
        }
        return total
    }
}
