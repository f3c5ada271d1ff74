import Foundation
import Haul

/// Running the same `haul get` again over files that are still there (a nightly sync,
/// yesterday's list retried): a file an earlier run placed, and that still has the size,
/// modification time and inode it had then, is reported done by the run itself and never
/// reaches the manager; only the other requests are added (see `docs/small-files.md`).
///
/// The report is the one the manager made when it took such a download into the run's group:
/// a `.completed` event with the earlier download's ID, path, bytes and checksums, counted in
/// the summary and in the group's completion. What changes is what is not done: the earlier
/// download's row is left as it is (not moved into the new group), no record is built for it,
/// and no event goes through the manager.
extension GetRun {
    /// The requests whose files are intact, as snapshots of their earlier downloads, and the
    /// requests left to add, in their order.
    /// `earlier`: what the look-up found of the rest's earlier downloads, for the manager's
    /// `add`, so that it does not look them up again.
    static func setAsideIntact(
        _ requests: [DownloadRequest], in store: EarlierRunStore
    ) async throws(HaulError) -> (intact: [DownloadInfo], rest: [DownloadRequest], earlier: DownloadManager.EarlierFinished?) {
        var found = try await store.lookUpEarlier(of: requests)
        var intact: [DownloadInfo] = []
        var rest: [DownloadRequest] = []
        rest.reserveCapacity(requests.count)
        // Each snapshot is moved out of the look-up's answer, not copied: a copy of a
        // `DownloadInfo` retains and releases every one of its references (issue 26's (h)).
        for index in requests.indices {
            if let info = found.intact[index].take() { intact.append(info) } else { rest.append(requests[index]) }
        }
        return (intact, rest, found.rest)
    }

    /// Files found intact, reported as the manager reports a download it took into the group
    /// already completed: one `.completed` each, counted in `tally`.
    static func reportIntact(_ intact: [DownloadInfo], to reporter: any DownloadReporter, tally: inout RunTally) {
        for info in intact {
            let event = ManagerEvent.completed(info)
            tally.record(event)
            reporter.handle(event, tally: tally)
        }
    }

    /// A run whose every file was found intact: reported as the manager's run reported it
    /// (each file's `.completed`, then the group's completion counting them all, then the
    /// summary), without opening a manager. A signal that came meanwhile makes it an
    /// interrupted run, as it would have been with a manager.
    func reportIntactOnly(_ intact: consuming [DownloadInfo], interruptions: RunInterruption) -> ExitStatus {
        let catalog = DownloadCatalog(copy intact)
        let reporter = mode.makeReporter(catalog: catalog, retry: configuration.retry)
        var tally = RunTally(total: catalog.count)
        var results: [DownloadResult] = []
        results.reserveCapacity(intact.count)
        // In order, each snapshot moved into its event rather than copied (see `setAsideIntact`):
        // popped into a second array, which pops them in their order again. (`reverse()`
        // copies the elements it swaps.)
        var reversed: [DownloadInfo] = []
        reversed.reserveCapacity(intact.count)
        while let info = intact.popLast() { reversed.append(info) }
        while let info = reversed.popLast() {
            if let result = info.result { results.append(result) }
            let event = ManagerEvent.completed(info)
            tally.record(event)
            reporter.handle(event, tally: tally)
        }
        let summary = GroupSummary(name: "haul get \(UUID().uuidString)", results: results)
        let completion = ManagerEvent.groupCompleted(summary)
        tally.record(completion)
        reporter.handle(completion, tally: tally)
        let settled = interruptions.settle()
        let interruption = settled ? nil : interruptions.interruption
        let status = interruption.map { ExitStatus.stopped(by: $0) } ?? Self.status(of: summary)
        reporter.finish(RunOutcome(tally: tally, status: status, interruptedBy: interruption, elapsed: tally.elapsed))
        if interruption != nil { StandardStream.error.writeLine(Self.interruptedMessage) }
        return status
    }

    /// `event`, with the run's group's completion counting the intact files among its
    /// members, as it did when they joined the group.
    static func including(_ intact: [DownloadInfo], in event: ManagerEvent, group: String) -> ManagerEvent {
        guard !intact.isEmpty, case .groupCompleted(let summary) = event, summary.name == group else { return event }
        return .groupCompleted(GroupSummary(
            name: summary.name, results: intact.compactMap(\.result) + summary.results, unfinished: summary.unfinished))
    }
}
