import Foundation

/// Pause, resume and cancel in a fleet, whichever daemon a client asks: the fleet behaves as
/// one service (`docs/fleet.md`, "Control through another daemon").
///
/// A daemon acts itself on the downloads it holds a lease on. Any other download is controlled
/// through the store (`DownloadLeasing.control`), which decides from the row, locked:
///
/// - held by another daemon under a live lease: the pause or cancel is recorded on the row
///   (`controlRequest`) and the owner is woken (`haul_control`); the owner finds it (at once
///   through `fleetNotified`, else with its next renewal) and stops the transfer as a local
///   pause or cancel would. Its fenced end clears the request. A download placing its verified
///   file is left to its completion, which wins: a placed file is never reported paused.
/// - held by nobody (queued, paused, failed, or its owner died): this daemon takes a lease on
///   it for the control alone, loads its row, carries the control out as the owner would (the
///   events, the part file of a cancel, the group's check in the fenced end) and gives the
///   lease back with that write. A resume leaves it queued and unleased: any daemon claims it.
/// - an owner killed -9 after a request was recorded: the next claimer carries it out
///   (`ClaimedDownload.control`) instead of running the download.
///
/// Nothing of this writes the owner's columns (bytes, validator, progress): only the request,
/// or a lease, and then the fenced writes of whoever holds that lease.
extension DownloadManager {
    /// Whether this daemon acts on `id` itself: not a fleet member, or it holds the download's
    /// lease (running it, or giving it back with its next write).
    func controlsLocally(_ id: DownloadID) -> Bool {
        guard let fleet else { return true }
        return fleet.book.lease(of: id) != nil || fleet.ending[id] != nil
    }

    /// Before a control is routed (`controlsLocally`): a download whose end is owed here (its
    /// lease given back by a write not yet committed, `FleetState.ending`) waits for that
    /// write. Decided while it was in flight, the control was done here and written after the
    /// lease was gone, plainly, without the group check: a group whose last member was
    /// canceled so never completed (`FleetControlTests`, under load). Settled, the download is
    /// either still ending here (the write failed: the next one gives the lease back, fenced,
    /// with the control in it) or nobody's, and goes through the store.
    func settleOwedEnd(of id: DownloadID) async {
        guard let fleet, fleet.book.lease(of: id) == nil, fleet.ending[id] != nil else { return }
        await flushDirty()
    }

    /// A client's control of a download this fleet member does not hold. Returns once it is
    /// carried out here, or once its owner carried it out (or after a lease's duration, when
    /// the owner has not: the request stays recorded for it, or for whoever takes it over).
    func controlThroughFleet(_ control: FleetControl, _ id: DownloadID, waitingForOwner: Bool = true) async throws(HaulError) {
        guard let fleet else { return }
        let outcome = try await fleet.leasing.control(
            control, of: id, session: session, for: fleet.membership.owner, leaseFor: fleet.membership.leaseDuration)
        switch outcome {
        case .unknown:
            // Not in the store yet (added here, its row still being written): as on one daemon.
            guard records[id] != nil else { throw unknown(id) }
            try await controlHere(control, id)
        case .refused(let error):
            throw error
        case .recorded(.request):
            if waitingForOwner { await waitForOwner(of: id, toCarryOut: control) }
        case .recorded:
            break
        case .leased(let lease):
            try await carryOutUnderControlLease(control, lease)
        }
    }

    /// `pauseAll` for the downloads of the session this fleet member does not hold: each
    /// paused here (nobody held it) or asked of its owner, without waiting for the owners.
    func pauseThroughFleet(_ ids: [DownloadID]) async {
        for id in ids {
            do throws(HaulError) { try await controlThroughFleet(.pause, id, waitingForOwner: false) } catch {
                if error.code != .invalidState { log(.warning, "pausing failed: \(error.message)", id, error: error) }
            }
        }
    }

    /// Pause, resume or cancel of a download held here, as on one daemon.
    func controlHere(_ control: FleetControl, _ id: DownloadID) async throws(HaulError) {
        switch control {
        case .pause: try await request(id) { $0.pause() }
        case .cancel: try await request(id) { $0.cancel() }
        case .resume: try resumeHere(id)
        }
    }

    /// Nobody held the download; `lease` is this daemon's, for the control alone. The row is
    /// loaded (its owner's last checkpoint is the truth, not this daemon's older view), a
    /// verified file a killed owner left is placed first (a completion wins over a pause), then
    /// the control is carried out and the lease given back with its fenced write.
    private func carryOutUnderControlLease(_ control: FleetControl, _ lease: DownloadLease) async throws(HaulError) {
        let id = lease.id
        fleet?.reclaimed(id)
        // Given back by the control's own write (fenced, releasing, with the group's check):
        // never in the local queue, so nothing starts here under it.
        fleet?.ending[id] = lease
        var row: StoredDownload?
        do { row = try await store.load(id) } catch { row = nil }
        if let loaded = row { row = await finishPlacementLeftBehind(loaded, under: lease) }
        guard let row, fleet?.ending[id] == lease else {
            if fleet?.ending[id] == lease { fleet?.ending[id] = nil }
            giveBack(lease)
            throw HaulError(.invalidState, "the download \(id) changed while it was being controlled; try again")
        }
        var record = loadedRecord(row)
        record.machine.restored(continueInterrupted: true)
        let reconciled = reconcile(&record)
        record.isFinished = record.machine.publicState.isTerminal
        adoptClaimed(record)
        if reconciled { markDirty(id) }
        let action = records.update(id) { record -> DownloadStateMachine.Action in
            switch control {
            case .pause: record.machine.pause()
            case .cancel: record.machine.cancel()
            case .resume: record.machine.resume()
            }
        } ?? .none
        if case .rejected(let error) = action {
            // Found placed after all (its owner died after the rename): reported as such.
            if reconciled, record.machine.publicState == .completed { hub.emit(.completed(record.info)) }
            if !reconciled {
                fleet?.ending[id] = nil
                giveBack(lease)
            }
            scheduleWrite()
            throw error
        }
        perform(action, for: id)
        // The end is written now, not after the batching delay: the client that asked, and
        // every other daemon's, read the row and the outbox from the store.
        if !(await flushDirty()) {
            configuration.logger.warning("writing a \(control.rawValue) failed; it is written again with the next change", metadata: ["haul.download": "\(id)"])
        }
    }

    /// Waits until the owner of `id` has carried `control` out (the row paused, canceled, or
    /// otherwise ended), polling the row, for at most one lease's duration.
    private func waitForOwner(of id: DownloadID, toCarryOut control: FleetControl) async {
        guard let fleet else { return }
        let clock = ContinuousClock()
        let deadline = clock.now + fleet.membership.leaseDuration
        while clock.now < deadline, !isShutDown {
            guard let row = try? await store.load(id) else { return }
            if row.state.isTerminal || row.state == .paused { return }
            try? await clock.sleep(for: .milliseconds(50))
        }
    }

    /// Called for each `haul_control` notification (`SessionHost`): another daemon may have
    /// asked this one to pause or cancel a download it runs, so the claim loop reads the
    /// requests (one statement) before it claims. Does nothing outside a fleet.
    package nonisolated func fleetNotified() {
        guard fleetWakes != nil else { return }
        Task { await self.controlsMayBePending() }
    }

    private func controlsMayBePending() {
        guard fleet != nil else { return }
        fleet?.controlsDue = true
        fleetWake()
    }

    /// The requests recorded for downloads held here, read when a notification said there may
    /// be some (`fleetNotified`); the renewal finds them anyway, at no extra statement.
    func takeRequestedControls() async {
        guard let fleet, fleet.controlsDue else { return }
        self.fleet?.controlsDue = false
        let leases = fleet.book.leases
        guard !leases.isEmpty, let controls = try? await fleet.leasing.requestedControls(leases) else { return }
        carryOutRequested(controls)
    }

    /// Stops the downloads held here that another daemon's client paused or canceled. One
    /// placing its verified file is left to its completion (which wins, and whose fenced end
    /// clears the request).
    func carryOutRequested(_ controls: [DownloadID: FleetControl]) {
        for (id, control) in controls where control != .resume {
            guard fleet?.book.lease(of: id) != nil, let record = records[id], !record.machine.slotHandedOver else { continue }
            configuration.logger.info("\(control.rawValue) asked through another daemon", metadata: ["haul.download": "\(id)"])
            if record.machine.isUnderway {
                Task { [weak self] in
                    guard let self, await self.fleetHolds(id) else { return }
                    try? await self.controlHere(control, id)
                }
            } else {
                // Queued here (claimed, not started): carried out now, before anything starts it.
                let action = records.update(id) { control == .pause ? $0.machine.pause() : $0.machine.cancel() } ?? .none
                if case .rejected = action { continue }
                perform(action, for: id)
            }
        }
    }

    private func fleetHolds(_ id: DownloadID) -> Bool {
        fleet?.book.lease(of: id) != nil
    }
}
