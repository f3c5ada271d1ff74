import Foundation

/// A group as the fleet sees it on any daemon (`haul.group`, `haul.waitGroup`,
/// `haul.groupMembers`, behind `BackgroundSession`'s group handles): its members' rows in the
/// store, with this manager's own view of the members it holds. A daemon's memory alone knows
/// only the members it added, ran or loaded, as it last saw them: a group added through it
/// and finished on other daemons would look unfinished for ever, and one added elsewhere
/// unknown. On SQLite these are the manager's own answers.
extension DownloadManager {
    /// The members of group `name` in the order they were added. On a shared store: each
    /// member's row, or this manager's record where that is the truth (a member it holds,
    /// runs or ended here), plus members added here and not written yet. Costs the group's
    /// members (index `download_session_group`), not the session's history.
    package func membersInFleet(ofGroup name: String) async throws(HaulError) -> [DownloadInfo] {
        guard let shared = sharedStore else { return try members(ofGroup: name) }
        let local = groups[name] != nil ? groupMembers(name) : []
        let rows: [StoredDownload]?
        do {
            rows = try await shared.members(session: session, group: name)
        } catch {
            // The store did not answer: this manager's memory, as without a fleet.
            guard groups[name] != nil else { throw error }
            return local
        }
        guard let rows else {
            guard groups[name] != nil else { throw unknownGroup(name) }
            return local
        }
        let stored = Set(rows.map(\.id))
        return rows.map { heldSnapshot($0.id) ?? $0.storedInfo } + local.filter { !stored.contains($0.id) }
    }

    /// The members of group `name` (`membersInFleet`) once more than `knownFinished` of them
    /// have finished (`knownFinished` < 0: once all have), or once `timeout` has passed.
    ///
    /// On a shared store a group's members finish on any daemon: the wait reads the store
    /// again whenever the session's outbox grows (each end appends its event, and the
    /// `haul_events` notification wakes this daemon), when this manager writes events, and
    /// every `fallbackPollInterval` in case a notification was lost. At each of those the
    /// store's counts of the group's members come first: the members themselves are read
    /// (every row decoded) only once the counts say enough may have finished, not at each of a
    /// large group's thousands of ends.
    package func waitForMembersInFleet(ofGroup name: String, knownFinished: Int, timeout: Duration) async throws(HaulError) -> [DownloadInfo] {
        guard let shared = sharedStore, let feed = shared.changes else {
            _ = try await waitForGroupChange(name, knownFinished: knownFinished, timeout: timeout)
            return try members(ofGroup: name)
        }
        func enough(finished: Int, of members: Int) -> Bool {
            finished == members || (knownFinished >= 0 && finished > knownFinished)
        }
        let session = self.session
        let reading = try await readAgainAtEachEnd("group '\(name)'", feed: feed, timeout: timeout) { () async throws(HaulError) -> [DownloadInfo]? in
            // Counts that cannot be read leave the answer to the members' own reading, which
            // falls back on this manager's memory when the store does not answer.
            if let counts = try? await shared.memberCounts(session: session, group: name),
               counts.members > 0, !enough(finished: counts.finished, of: counts.members) {
                return nil
            }
            return try await self.membersInFleet(ofGroup: name)
        } until: { members in
            guard let members else { return false }
            return enough(finished: members.count { $0.state.isTerminal }, of: members.count)
        }
        if let reading { return reading }
        return try await membersInFleet(ofGroup: name)
    }

    /// Reads `read` until `done` says so, `timeout` passes or the manager shuts down, and
    /// returns the last reading: again at each outbox append of the session on any daemon
    /// (`feed`), at this manager's own event writes, and every `fallbackPollInterval`.
    func readAgainAtEachEnd<Reading: Sendable>(
        _ what: String, feed: StoreChangeFeed, timeout: Duration,
        _ read: () async throws(HaulError) -> Reading, until done: (Reading) -> Bool
    ) async throws(HaulError) -> Reading {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            // Taken before reading: an end notified after it makes the wait below return at once.
            let generation = feed.generation(of: session)
            let reading = try await read()
            let remaining = clock.now.duration(to: deadline)
            if done(reading) || remaining <= .zero || isShutDown { return reading }
            await waitForStoredEvents(timeout: min(remaining, feed.fallbackPollInterval), feed: feed, generation: generation)
            if Task.isCancelled { throw Self.waitCanceled(what) }
        }
    }

    /// This manager's view of `id` where it is the truth in a fleet: a download it ended, runs
    /// or holds the lease of (any it has outside a fleet). A record of a download added here
    /// and run by another daemon is as this manager last saw it, so its row is read instead.
    func heldSnapshot(_ id: DownloadID) -> DownloadInfo? {
        guard let record = records[id], isCurrentInMemory(id) else { return nil }
        return record.info
    }
}
