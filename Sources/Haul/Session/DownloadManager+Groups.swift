import Foundation

/// Groups as the manager keeps them: members, summaries, aggregate progress, and the moment a
/// group completes.
extension DownloadManager {
    /// Returns once every member has finished, with the summary; at shutdown, returns then
    /// with the rest in `GroupSummary.unfinished`. Throws `.waitCanceled` when the waiting
    /// task is canceled.
    package func groupCompletion(_ name: String) async throws(HaulError) -> GroupSummary {
        guard let group = groups[name] else { throw unknownGroup(name) }
        guard group.unfinished > 0, !isShutDown else { return summary(of: name) }
        let key = waits.newKey()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: WaitBook.GroupWaiter) in
                if Task.isCancelled {
                    continuation.resume(returning: .failure(Self.waitCanceled("group '\(name)'")))
                } else {
                    waits.add(continuation, for: name, key: key)
                }
            }
        } onCancel: {
            Task { await self.cancelWait(key) }
        }
        return try result.get()
    }

    /// Returns once the download has finished (at once if it has); at shutdown, returns then
    /// with its state as it is. Throws `.waitCanceled` when the waiting task is canceled.
    package func finished(_ id: DownloadID) async throws(HaulError) -> DownloadInfo {
        guard let record = records[id] else { throw unknown(id) }
        if record.machine.publicState.isTerminal || isShutDown { return record.info }
        let key = waits.newKey()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: WaitBook.DownloadWaiter) in
                if Task.isCancelled {
                    continuation.resume(returning: .failure(Self.waitCanceled("download \(id)")))
                } else {
                    waits.add(continuation, for: id, key: key)
                }
            }
        } onCancel: {
            Task { await self.cancelWait(key) }
        }
        return try result.get()
    }

    private func cancelWait(_ key: UInt64) {
        waits.fail(key, with: Self.waitCanceled("a download or group"))
    }

    static func waitCanceled(_ what: String) -> HaulError {
        HaulError(.waitCanceled, "the task waiting for \(what) was canceled; the download goes on")
    }

    func groupMembers(_ name: String) -> [DownloadInfo] {
        (groups[name]?.members ?? []).compactMap { records[$0]?.info }
    }

    func groupProgress(_ name: String) -> TransferProgress {
        aggregate(groups[name]?.members ?? [])
    }

    /// A member finished: when that completes its group, the group's completion is announced
    /// and everyone waiting for it is answered.
    func groupMemberFinished(_ id: DownloadID) {
        // In a fleet the store says when a group completes (`LeaseFence.completedGroup`): other
        // daemons finish some of its downloads.
        guard let name = groupOf(id), groups.memberFinished(in: name), fleet == nil else { return }
        announceCompletion(of: name)
    }

    /// Keeps the group `name` from completing (created if needed) while members are still to
    /// come (a live playlist being recorded), until `releaseGroupHold(_:)`.
    package func holdGroupOpen(_ name: String) {
        groups.hold(name)
    }

    /// Ends a `holdGroupOpen(_:)`: the group completes now if every member has finished.
    package func releaseGroupHold(_ name: String) {
        guard groups.releaseHold(name) else { return }
        announceCompletion(of: name)
    }

    func announceCompletion(of name: String) {
        let summary = summary(of: name)
        hub.emit(.groupCompleted(summary))
        waits.resolve(group: name, with: .success(summary))
        groupCompletedForRetention(name)
    }

    /// At shutdown nothing will finish any more: answer everyone still waiting, with things as
    /// they are.
    func releaseAllWaiters() {
        for name in waits.waitedGroups {
            waits.resolve(group: name, with: .success(summary(of: name)))
        }
        for id in waits.waitedDownloads {
            guard let info = records[id]?.info else { continue }
            waits.resolve(id, with: info)
        }
    }

    func groupMemberReopened(_ id: DownloadID) {
        guard let name = groupOf(id) else { return }
        groups.memberReopened(in: name)
    }

    /// The group's members now: each finished one with its file or error, the others listed
    /// as unfinished.
    func summary(of name: String) -> GroupSummary {
        var results: [DownloadResult] = []
        var unfinished: [DownloadID] = []
        for id in groups[name]?.members ?? [] {
            guard let record = records[id] else { continue }
            if let result = record.result {
                results.append(result)
            } else {
                unfinished.append(id)
            }
        }
        return GroupSummary(name: name, results: results, unfinished: unfinished)
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

    func unknownGroup(_ name: String) -> HaulError {
        HaulError(.unknownGroup, "no group named '\(name)' in session '\(identifier)'")
    }
}

extension DownloadManager.Record {
    /// How the download ended, built without the whole `DownloadInfo`; nil while it has not.
    var result: DownloadResult? {
        let outcome: DownloadResult.Outcome
        switch machine.publicState {
        case .completed:
            let details = self.details
            guard let fileURL = details.fileURL else { return nil }
            let length = details.progress.expectedBytes ?? details.durable.fileSize ?? details.progress.completedBytes
            outcome = .completed(DownloadedFile(
                url: fileURL, length: length, checksums: details.verifiedChecksums, skipped: details.skipped))
        case .failed:
            outcome = .failed(details.error ?? HaulError(.invalidState, "download \(id) failed for a reason that was not kept"))
        case .canceled:
            outcome = .canceled
        case .queued, .running, .paused:
            return nil
        }
        return DownloadResult(id: id, group: group, outcome: outcome)
    }
}

extension DownloadManager {
    /// The group's summary once more than `knownFinished` of its members have finished
    /// (`knownFinished` < 0: once all have), or once `timeout` has passed, whichever is first:
    /// the long poll behind a background session's group handles.
    package func waitForGroupChange(_ name: String, knownFinished: Int, timeout: Duration) async throws(HaulError) -> GroupSummary {
        let deadline = ContinuousClock.now + timeout
        while true {
            // Subscribed before the summary is read, in the same turn: no finish is missed.
            let live = hub.subscribe()
            let due = ContinuousClock.now >= deadline || isShutDown
            // The group's counters say whether what the caller waits for can have happened:
            // the summary (a result for every member) is built only then. Built at each end,
            // a wait for a group of 5,000 to complete cost the daemon more than its transfers.
            if due || mayHaveChanged(name, knownFinished: knownFinished) {
                let now = try summary(ofGroup: name)
                let changed = knownFinished >= 0 ? now.results.count > knownFinished : now.isComplete
                if changed || now.isComplete || due { return now }
            }
            let waiter = Task {
                for await event in live {
                    switch event {
                    case .completed(let info) where info.group == name, .failed(let info) where info.group == name: return
                    case .canceled(_, name), .resumed, .groupCompleted: return
                    default: continue
                    }
                }
            }
            let timer = Task {
                try? await Task.sleep(until: deadline)
                waiter.cancel()
            }
            await withTaskCancellationHandler {
                await waiter.value
            } onCancel: {
                waiter.cancel()
            }
            timer.cancel()
            if Task.isCancelled { throw Self.waitCanceled("group '\(name)'") }
        }
    }

    /// False only when the group's counters show that fewer than `knownFinished` + 1 members
    /// have finished (`knownFinished` < 0: that some have not): a summary can then say nothing
    /// new. An unknown group is left to `summary(ofGroup:)`, which says so.
    private func mayHaveChanged(_ name: String, knownFinished: Int) -> Bool {
        guard let group = groups[name] else { return true }
        // Holds count as unfinished without being members.
        let unfinishedMembers = group.unfinished - group.holds
        if unfinishedMembers <= 0 { return true }
        return knownFinished >= 0 && group.members.count - unfinishedMembers > knownFinished
    }
}
