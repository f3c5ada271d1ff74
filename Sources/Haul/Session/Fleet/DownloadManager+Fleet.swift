import Foundation

/// A manager in a fleet (`Configuration.fleet`, a PostgreSQL store): it runs only downloads it
/// holds a lease on. Where `SchedulerState.admit()` alone decides on one daemon, here a claim
/// in the store takes runnable downloads within the session's limits counted across every
/// daemon (`PostgresLeases.claim`); the local scheduler then orders only what this daemon
/// holds, up to its own cap (`FleetMembership.slots`). See `docs/fleet.md`.
///
/// - Claims happen when a slot frees, when downloads are added, when `fleetWake()` is called
///   (a `LISTEN/NOTIFY` wake-up), and every `claimInterval` anyway.
/// - A renewal every `L/3` keeps the leases; a lease lost (taken over after this daemon went
///   silent, or past its local deadline) stops its transfer without writing anything more.
/// - Every write about a held download is fenced by its lease (`DownloadManager+FleetWrites`);
///   a download's end is fenced and gives the lease back in the same transaction.
extension DownloadManager {
    /// Asks the claim loop to claim now (it claims at most once per wake-up; wake-ups that
    /// arrive meanwhile are coalesced). Does nothing outside a fleet. For whoever learns of
    /// new work: a slot freed here, downloads added, a `haul_queue` notification.
    package nonisolated func fleetWake() {
        fleetWakes?.continuation.yield()
    }

    /// What other daemons change in the shared store (`LISTEN/NOTIFY`); nil on SQLite.
    package nonisolated var storeChanges: StoreChangeFeed? { store.changes }

    /// This daemon's fleet ID, nil outside a fleet.
    package nonisolated var fleetOwner: String? { configuration.fleet?.owner }

    /// Starts claiming, polling and renewing (once the session's downloads are loaded).
    func startFleet() {
        guard var fleet, fleet.tasks.isEmpty, let wakes = fleetWakes else { return }
        let membership = fleet.membership
        let clock = ContinuousClock()
        fleet.tasks.append(Task { [weak self] in
            for await _ in wakes.stream {
                guard let self else { return }
                await self.takeRequestedControls()
                guard await self.claimOnce() else { return }
            }
        })
        fleet.tasks.append(Task {
            while !Task.isCancelled {
                wakes.continuation.yield()
                try? await clock.sleep(for: membership.claimInterval)
            }
        })
        let renewal = fleet.book.renewalInterval
        fleet.tasks.append(Task { [weak self] in
            while !Task.isCancelled {
                try? await clock.sleep(for: renewal)
                guard !Task.isCancelled, let self, await self.renewLeases() else { return }
            }
        })
        self.fleet = fleet
    }

    /// One claim for the free local slots. Returns false once the manager has shut down.
    private func claimOnce() async -> Bool {
        guard !isShutDown, let fleet else { return false }
        let free = fleet.freeSlots
        guard free > 0 else { return true }
        let sent = ContinuousClock.now
        let claimed: [ClaimedDownload]
        do {
            claimed = try await fleet.leasing.claim(
                session: session, for: fleet.membership.owner, upTo: free, leaseFor: fleet.membership.leaseDuration)
        } catch {
            configuration.logger.warning("claiming downloads failed: \(error.message)")
            return !isShutDown
        }
        guard !claimed.isEmpty else { return !isShutDown }
        guard !isShutDown else {
            // Given back at once: this manager will start nothing more.
            _ = try? await fleet.leasing.release(claimed.map(\.lease))
            return false
        }
        self.fleet?.book.claimed(claimed, sentAt: sent)
        await takeClaimed(claimed)
        // All the free slots were filled: there may be more to take once they free up.
        return !isShutDown
    }

    /// Loads each claimed download from the store (its row is the truth: another daemon may
    /// have added it, run it, or checkpointed it since this one last looked) and queues it.
    private func takeClaimed(_ claimed: [ClaimedDownload]) async {
        for download in claimed {
            let id = download.lease.id
            // This daemon's own earlier transfer of it, stopped for a lost lease, still ending:
            // taken once that end came (`droppedStaleEnd`), and counted then.
            guard fleet?.stopping.claimed(download) ?? false else { continue }
            if download.isTakeover {
                fleet?.takeovers += 1
                metrics.takeovers?.increment()
                configuration.logger.notice(
                    "taking over a download from daemon \(download.previousOwner ?? "?")", metadata: ["haul.download": "\(id)"])
            }
            fleet?.reclaimed(id)
            if records[id]?.machine.isUnderway == true || scheduler.hasPlace(id) && scheduler.isQueued(id) {
                continue
            }
            var row: StoredDownload?
            do { row = try await store.load(id) } catch { row = nil }
            // A verified file its previous owner left unplaced is placed first, under this lease.
            if let loaded = row, fleet?.book.lease(of: id) == download.lease {
                row = await finishPlacementLeftBehind(loaded, under: download.lease)
            }
            guard fleet?.book.lease(of: id) == download.lease else { continue }
            guard let row, !isShutDown else {
                giveBack(download.lease)
                continue
            }
            if records[id]?.machine.isUnderway == true || scheduler.hasPlace(id) { continue }
            var record = loadedRecord(row)
            record.machine.restored(continueInterrupted: true)
            let reconciled = reconcile(&record)
            let durable = record.details.durable
            record.details.progress = TransferProgress(completedBytes: durable.durableOffset, expectedBytes: durable.expectedLength)
            guard record.machine.restoredPlace == .waiting else {
                // Placed after all (its previous owner died after the rename), or no longer
                // runnable: reported as it is, its lease given back with that write.
                record.isFinished = record.machine.publicState.isTerminal
                adoptClaimed(record)
                if reconciled {
                    fleet?.book.released(id)
                    fleet?.ending[id] = download.lease
                    markDirty(id)
                    if record.machine.publicState == .completed { hub.emit(.completed(record.info)) }
                } else {
                    giveBack(download.lease)
                }
                continue
            }
            adoptClaimed(record)
            enqueueForScheduling(record)
            if reconciled || row.state == .running { markDirty(id) }
            // Paused or canceled through another daemon, whose owner died before stopping it:
            // carried out now, before it starts.
            if let control = download.control { carryOutRequested([id: control]) }
        }
        admitQueued()
    }

    /// Takes a claimed download's record as the store has it, in place of the one this daemon
    /// knew (added here, or loaded at start, and since run elsewhere): it keeps its place in
    /// the listing and its group.
    func adoptClaimed(_ record: Record) {
        guard let old = records[record.id] else { return adoptLoaded(record) }
        releasePartKey(of: old)
        records[record.id] = record
        if !record.isFinished { partKeys.hold(record.partKey, by: record.id) }
        if let group = record.group, record.isFinished, !old.isFinished { _ = groups.memberFinished(in: group) }
    }

    /// Gives a lease back without a write about its download (nothing was done under it).
    func giveBack(_ lease: DownloadLease) {
        fleet?.book.released(lease.id)
        guard let leasing = fleet?.leasing else { return }
        Task { _ = try? await leasing.release([lease]) }
        fleetWake()
    }

    /// Renews every lease held; stops the transfers of those lost (or past their local
    /// deadline when the store does not answer). Returns false once the manager has shut down.
    private func renewLeases() async -> Bool {
        guard !isShutDown, let fleet else { return false }
        let sent = ContinuousClock.now
        var stops: [LeaseBook.Stop] = []
        var controls: [DownloadID: FleetControl] = [:]
        if let renewal = try? await fleet.leasing.renew(fleet.book.leases, for: fleet.membership.leaseDuration) {
            guard self.fleet != nil else { return false }
            stops += self.fleet!.book.renewed(renewal, sentAt: sent)
            controls = renewal.controls
        }
        guard self.fleet != nil else { return false }
        stops += self.fleet!.book.expire(now: .now)
        for stop in stops {
            configuration.logger.warning(
                "lease lost (\(stop.reason == .lost ? "the store gave it to another daemon" : "not renewed in time")): stopping",
                metadata: ["haul.download": "\(stop.lease.id)"])
            abandon(stop.lease.id, lease: stop.lease)
        }
        // Pauses and cancels asked through other daemons (`DownloadManager+FleetControl`).
        carryOutRequested(controls)
        return !isShutDown
    }

    /// The download is no longer this daemon's (its lease lost): its transfer stops and the
    /// manager forgets it, writing nothing more about it. Its row, part file and checkpoint
    /// are the new owner's.
    ///
    /// A download placing its verified file is not stopped: the fence of its completion
    /// decides (`FleetState.leaseLost`). `evenWhilePlacing`: that fence was refused.
    func abandon(_ id: DownloadID, lease: DownloadLease? = nil, evenWhilePlacing: Bool = false) {
        let placing = !evenWhilePlacing && records[id]?.machine.slotHandedOver == true
        guard fleet?.leaseLost(id, lease: lease, placing: placing) ?? false else { return }
        metrics.leasesLost?.increment()
        writes.abandon(id)
        pendingPlacements.removeAll { $0.id == id }
        var endComing = false
        if let record = records[id] {
            record.details.retryTimer?.cancel()
            if record.machine.isUnderway { endComing = lane.stop(id) }
            for waiter in record.details.stopWaiters { waiter.resume() }
        }
        // What the stopped transfer still reports is dropped; a new claim of the download
        // waits for its end.
        fleet?.stopping.abandoned(id, endComing: endComing)
        if scheduler.isAdmitted(id) { scheduler.finished(id) }
        forget(id)
        admitQueued()
        fleetWake()
    }

    /// Whether `ended` is the end of a transfer stopped for a lost lease (`abandon`): then it
    /// is dropped (its download is forgotten here, or claimed again and not yet started), and a
    /// claim of the same download that waited for it is taken now.
    func droppedStaleEnd(_ ended: TransferLane.Ended) -> Bool {
        guard case .stale(let claim)? = fleet?.stopping.transferEnded(ended.id) else { return false }
        if let claim { Task { await self.takeClaimed([claim]) } }
        return true
    }

    /// The placements of `taken` whose completion the store did not refuse; the others' files
    /// stay as they are and their downloads are abandoned (another daemon holds them now).
    func fleetPlacementsAccepted(_ taken: [PendingPlacement]) -> [PendingPlacement] {
        taken.filter { pending in
            guard fleet?.refusedPlacements.remove(pending.id) != nil else { return true }
            abandon(pending.id, evenWhilePlacing: true)
            return false
        }
    }

    /// After an action: a held download that is no longer runnable here (completed, failed,
    /// paused, canceled, or forgotten) gives its lease back with its next write.
    func settleLease(_ id: DownloadID) {
        // Clients of other daemons read the outbox from the store, not from this daemon: what
        // an action emitted is written within the batching delay, not at this daemon's next
        // change or its own client's next poll.
        defer { scheduleWrite() }
        if let group = fleet?.completedGroups[id], records[id]?.machine.publicState.isTerminal ?? true {
            fleet?.completedGroups[id] = nil
            announceStoredCompletion(of: group)
        }
        guard let lease = fleet?.book.lease(of: id) else { return }
        if let state = records[id]?.machine.publicState {
            guard state.isTerminal || state == .paused else { return }
            fleet?.book.released(id)
            fleet?.ending[id] = lease
            markDirty(id)
        } else {
            // Forgotten (its row deleted with it): nothing to fence.
            giveBack(lease)
        }
        fleetWake()
    }

    /// Where `enqueueForScheduling` goes in a fleet: only a download this daemon holds joins
    /// the local queue; any other waits for a claim (woken now).
    func fleetEnqueue(_ record: Record, held: Bool, atFront: Bool, fleet: FleetState) {
        guard !held, fleet.book.lease(of: record.id) != nil else {
            if !held { fleetWake() }
            return
        }
        guard !scheduler.hasPlace(record.id), !scheduler.isAdmitted(record.id) else { return }
        scheduler.enqueue(record.id, host: record.host, priority: record.kept.priority, atFront: atFront)
    }

    /// At shutdown, before the transfers stop: the loops end, and the downloads held here are
    /// marked so that stopping them writes nothing (they are not paused; their rows stay
    /// `running`, to be taken over). Returns the leases to give back once they have stopped.
    func leaveFleet() -> [DownloadLease] {
        guard var fleet else { return [] }
        for task in fleet.tasks { task.cancel() }
        fleet.tasks = []
        fleetWakes?.continuation.finish()
        let held = fleet.book.leases
        for lease in held {
            fleet.book.released(lease.id)
            fleet.lost.insert(lease.id)
            writes.abandon(lease.id)
        }
        self.fleet = fleet
        return held
    }

    /// After every transfer stopped and the last write: the leases go back at once, so the
    /// other daemons take the downloads over now instead of after the lease's duration.
    func releaseFleetLeases(_ leases: [DownloadLease]) async {
        guard let leasing = fleet?.leasing, !leases.isEmpty else { return }
        _ = try? await leasing.release(leases)
    }
}
