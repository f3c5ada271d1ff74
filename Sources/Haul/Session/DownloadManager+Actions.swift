import Foundation
import Logging

/// Carrying out the state machines' actions: starting and stopping transfer tasks, retry
/// timers, slots, and the events and group bookkeeping that follow each transition.
extension DownloadManager {
    /// Starts queued downloads while the scheduler has free slots.
    func admitQueued() {
        guard !isShutDown, !admissionSuspended else { return }
        for id in scheduler.admit() {
            guard let action = records.update(id, { $0.machine.slotGranted() }) else { continue }
            perform(action, for: id)
        }
    }

    func perform(_ action: DownloadStateMachine.Action, for id: DownloadID) {
        // A completion already written with its placement intent, before the rename
        // (DownloadManager+Placement), is not written twice.
        if action.isWrittenToStore, action != .reportCompleted || records[id]?.details.completionStored != true {
            markDirty(id)
        }
        switch action {
        case .none, .rejected:
            break
        case .handOverSlot:
            scheduler.handOver(id)
            admitQueued()
        case .reclaimSlot(let next):
            if let host = records[id]?.host { scheduler.reclaim(id, host: host) }
            perform(next, for: id)
            return
        case .leaveQueue(let next):
            scheduler.dequeue(id)
            perform(next, for: id)
            return
        case .holdInQueue(let next):
            scheduler.hold(id)
            perform(next, for: id)
            return
        case .giveUpSlot(let next):
            // The wait is announced (its timer cannot fire before this turn ends), then the slot
            // goes to the next download at once: nothing waits on a server that is gone. The
            // ticker no longer samples it, so its speed is zero now, not its last sample.
            records[id]?.details.progress.bytesPerSecond = 0
            perform(next, for: id)
            scheduler.park(id)
            admitQueued()
            return
        case .askForSlot:
            scheduler.markDue(id)
            admitQueued()
        case .startTransfer(let attempt):
            startTransfer(id, attempt: attempt)
        case .stopTransfer:
            lane.stop(id)
        case .scheduleRetry(let attempt, let delay):
            scheduleRetry(id, attempt: attempt, delay: delay)
        case .cancelRetryAndPause:
            records[id]?.details.retryTimer?.cancel()
            records[id]?.details.retryTimer = nil
            releaseSlot(id)
            keepPlaceWhilePaused(id)
            hub.emit(.paused(id, reason: nil))
        case .cancelRetryAndDiscard:
            records[id]?.details.retryTimer?.cancel()
            records[id]?.details.retryTimer = nil
            releaseSlot(id)
            discard(id)
        case .reportPaused:
            releaseSlot(id)
            keepPlaceWhilePaused(id)
            records[id]?.details.progress.bytesPerSecond = 0
            // Stopped at a fleet member's shutdown: not paused, taken over (`leaveFleet`).
            if fleet?.lost.contains(id) != true { hub.emit(.paused(id, reason: nil)) }
            wakeStopWaiters(id)
        case .reportPausedBecause(let error):
            log(.warning, "paused until someone acts: \(error.message)", id, error: error)
            releaseSlot(id)
            keepPlaceWhilePaused(id)
            records[id]?.details.error = error
            records[id]?.details.progress.bytesPerSecond = 0
            hub.emit(.paused(id, reason: error))
            wakeStopWaiters(id)
        case .discardAndReportCanceled:
            releaseSlot(id)
            discard(id)
            wakeStopWaiters(id)
        case .reportCompleted:
            releaseSlot(id)
            // A copy of the record must be gone before `finish` changes it (see there).
            do {
                guard let record = records[id] else { return }
                log(.debug, "completed: \(record.details.fileURL?.path ?? "?")", id)
                if hub.wants(.completed) { hub.emit(.completed(record.info)) }
            }
            finish(id)
            wakeStopWaiters(id)
        case .reportFailed(let error):
            log(.warning, "failed: \(error.message)", id, error: error)
            metrics.failed(error.code)
            releaseSlot(id)
            records[id]?.details.error = error
            records[id]?.details.progress.bytesPerSecond = 0
            guard let info = records[id]?.info else { return }
            hub.emit(.failed(info))
            finish(id)
        case .restartTransfer(let attempt):
            if let pending = records[id]?.details.replacement {
                records[id]?.details.replacement = nil
                swapRequest(of: id, for: pending.request)
            }
            // A new request starts afresh: all its retries ahead, no error of the old one shown.
            records[id]?.details.attempts = 0
            records[id]?.details.error = nil
            wakeStopWaiters(id)
            startTransfer(id, attempt: attempt)
        case .reportRequeued:
            guard let record = records[id] else { return }
            if record.isFinished {
                records[id]?.isFinished = false
                if groupOf(id) != nil { groupMemberReopened(id) }
            }
            claimPartKey(id)
            records[id]?.details.error = nil
            retention.withdraw(id)
            // A paused download resumes from the place it kept in the queue.
            if !scheduler.release(id) { enqueueForScheduling(record) }
            hub.emit(.resumed(id))
            admitQueued()
        }
        if fleet != nil { settleLease(id) }
        forgetDue()
    }

    private func startTransfer(_ id: DownloadID, attempt: Int) {
        let prepared = records.update(id) { record in
            let transfer: TransferState
            if let kept = record.details.transfer {
                transfer = kept
            } else {
                let request = record.kept.request
                // Kept while the transfer runs: its end is reported with the request whole.
                record.details.parsedURL = request.url
                transfer = TransferState(
                    request: request, partKey: record.partKey.description, validator: record.details.durable.validator,
                    expectedLength: record.details.durable.expectedLength, durableOffset: record.details.durable.durableOffset,
                    finalURL: record.details.finalURL, segments: record.details.durable.segments)
            }
            record.details.transfer = nil
            record.details.attempts += 1
            let live = record.details.live ?? LiveTransfer()
            // The silence clock restarts here, on the actor, not only when a worker of the lane
            // takes the attempt: otherwise a progress tick in between (a loaded machine, a retry
            // after a long wait) could time the new attempt out on the old attempt's silence
            // and cancel it before it began, which ended as a stop nobody asked for.
            live.attemptStarted()
            record.details.live = live
            return (transfer, live)
        }
        guard let (transfer, live) = prepared else { return }
        let hub = self.hub
        let outbox = self.outbox
        if hub.wants(.activated) { hub.emit(.activated(id)) }
        let reporter = TransferReporter(
            started: { [weak self] resumedFrom, finalURL in
                // Built only for someone who follows it: a batch of small files has no one.
                guard hub.wants(.started) else { return }
                hub.emit(.started(id, resumedFrom: resumedFrom, finalURL: finalURL))
                // A kept `started` event is written with the next batch, not left waiting for
                // the transfer's first checkpoint; one hop asks for that batch for every
                // event appended until the manager takes the request.
                if let outbox, outbox.claimWriteRequest() { Task { await self?.scheduleWrite() } }
            },
            checkpoint: { checkpoint in await self.recordCheckpoint(id, checkpoint) },
            restartedFromZero: { [logger = configuration.logger] reason in
                logger.notice("restarting from byte 0: \(reason)", metadata: ["haul.download": "\(id)"])
            })
        // On a worker of the lane: no task per transfer, and the end comes back in a batch. The
        // watchdog's clock started above, so that a stop it orders before a worker took the
        // attempt still ends it as a timeout (`TransferLane.stop`).
        lane.submit(TransferLane.Job(id: id, transfer: transfer, live: live, reporter: reporter))
        startTickerIfNeeded()
    }

    /// The transfers that ended since the last call, concluded in one turn of the actor.
    func takeTransferEnds() {
        for ended in lane.takeEnded() {
            if fleet != nil, droppedStaleEnd(ended) { continue }
            transferEnded(ended.id, transfer: ended.transfer, result: ended.result)
        }
    }

    private func transferEnded(_ id: DownloadID, transfer: TransferState, result: TransferResult) {
        // Changed in place: a copy of the record would copy its details too.
        _ = records.update(id) { [metrics] record in
            if let live = record.details.live { metrics.received(live.takeReceivedBytes()) }
            record.details.transfer = transfer
            record.details.finalURL = transfer.finalURL ?? record.details.finalURL
            if let snapshot = record.details.live?.snapshot {
                record.details.progress.completedBytes = snapshot.completedBytes
                record.details.progress.expectedBytes = snapshot.expectedBytes ?? record.details.progress.expectedBytes
            }
        }
        if case .verified(let file) = result {
            // Placed with the files verified at about the same time (DownloadManager+Placement).
            placeAfterRecording(id, file)
        } else {
            conclude(id, result)
        }
    }

    /// The download's transfer is over (placed, failed, stopped): its state machine decides
    /// what follows, a failure included (`DownloadStateMachine.transferFailed`).
    func conclude(_ id: DownloadID, _ result: TransferResult) {
        let ended = records.update(id) { record in
            switch result {
            case .completed(let placement, let checksums, let bytes):
                // Without the hint, Foundation stats the path to learn whether it is a directory.
                record.details.fileURL = URL(fileURLWithPath: placement.path, isDirectory: false)
                // Size and mtime as placed: a later change by someone else is noticed by them.
                let placed = placement.stamp ?? placement.stamped().stamp
                record.details.durable.fileSize = placed?.size
                record.details.durable.fileModified = placed.map { Date(timeIntervalSince1970: $0.modified) }
                record.details.durable.expectedLength = bytes
                record.details.durable.durableOffset = bytes
                record.details.skipped = placement.skipped
                record.details.verifiedChecksums = checksums
                record.details.error = nil
                record.details.progress = TransferProgress(completedBytes: bytes, expectedBytes: bytes)
                // The part file and its state are spent.
                record.details.transfer = nil
                return record.machine.transferEnded(.succeeded)
            case .failed(let error):
                let failed = DownloadStateMachine.FailedAttempt(
                    error: error, attemptsMade: record.details.attempts, addedAt: record.createdAt,
                    requestDeadline: record.kept.waitDeadline, now: Date(), jitter: Double.random(in: 0..<1),
                    partFileHeldElsewhere: PartFile.isHeldElsewhere(error), leased: fleet?.book.lease(of: id) != nil)
                let verdict = record.machine.transferFailed(failed, policy: configuration.retry)
                if let recorded = verdict.recordedError { record.details.error = recorded }
                return verdict.action
            case .stopped:
                return record.machine.transferEnded(.stopped)
            case .verified:
                preconditionFailure("a verified file is placed before its download concludes")
            }
        }
        guard let action = ended else { return }
        perform(action, for: id)
    }

    private func scheduleRetry(_ id: DownloadID, attempt: Int, delay: Duration) {
        guard let error = records[id]?.details.error else { return }
        // A quick retry is `waitingToRetry`; once those are used up the download waits for its server.
        let waiting: Bool = if case .waitingForServer = records[id]?.machine.state { true } else { false }
        log(.info, "\(waiting ? "waiting for the server" : "retrying"): attempt \(attempt) in \(delay) after \(error.message)", id, error: error)
        (waiting ? metrics.serverWaits : metrics.retries).increment()
        hub.emit(.retrying(id, attempt: attempt, delay: delay, error: error))
        let clock = configuration.clock
        records[id]?.details.retryTimer = Task {
            do { try await clock.sleep(for: delay) } catch { return }
            self.retryTimerFired(id)
        }
    }

    private func retryTimerFired(_ id: DownloadID) {
        // A timer canceled after it woke must not restart a download that was paused meanwhile.
        guard !Task.isCancelled else { return }
        let fired = records.update(id) { record -> DownloadStateMachine.Action? in
            guard let action = record.machine.retryTimerFiredIfWaiting() else { return nil }
            record.details.retryTimer = nil
            return action
        }
        guard let found = fired, let action = found else { return }
        perform(action, for: id)
    }

    /// Gives the download's slot back, if it holds one (a queued download paused or canceled
    /// holds none), or its place ahead of the queue, if it waits for its server.
    private func releaseSlot(_ id: DownloadID) {
        guard scheduler.isAdmitted(id) else { return }
        scheduler.finished(id)
        admitQueued()
    }

    /// A download paused out of a slot (or a retry wait) goes to the front of its priority's
    /// lane, held: aria2 puts a paused active download at the front of its waiting queue.
    /// Also lets go of the URL its transfer parsed: a paused download may wait for long.
    private func keepPlaceWhilePaused(_ id: DownloadID) {
        // (Written only when set: a write gives a download that never started its details.)
        if records[id]?.details.parsedURL != nil { records[id]?.details.parsedURL = nil }
        guard let record = records[id], record.machine.state == .paused, !scheduler.hasPlace(id) else { return }
        enqueueForScheduling(record, held: true, atFront: true)
    }

    private func discard(_ id: DownloadID) {
        scheduler.dequeue(id)
        guard let record = records[id] else { return }
        // The part file may meanwhile belong to a newer download of the same request.
        if ownsPartFile(record) {
            let part = record.details.transfer?.part ?? PartFile(directory: record.kept.directory.path, key: record.partKey.description)
            part.discard()
        }
        records[id]?.details.transfer = nil
        records[id]?.details.durable = DurableFields()
        hub.emit(.canceled(id, group: records[id]?.group))
        finish(id)
    }

    /// Whether no other unfinished download uses this record's part file.
    func ownsPartFile(_ record: Record) -> Bool {
        partKeys.owns(record.partKey, id: record.id)
    }

    /// A finished download queued again takes its part key back; if a newer download of the
    /// same request holds it now, this one takes a key of its own and starts its bytes over,
    /// so that two downloads never write one part file.
    private func claimPartKey(_ id: DownloadID) {
        guard let record = records[id], let ownKey = partKeys.reclaim(record.partKey, by: id) else { return }
        records[id]?.partKey = ownKey
        records[id]?.details.transfer = nil
        records[id]?.details.durable = DurableFields()
        records[id]?.details.progress = TransferProgress()
        markWholeRowDirty(id)
    }

    /// Bookkeeping when a download reaches a terminal state, after its event was emitted (so
    /// that a group's completion always follows its members' events).
    private func finish(_ id: DownloadID) {
        // The record is read in a scope of its own: a copy still alive when its details change
        // below would have them copied, a second box of about 1 KiB for every download.
        let state: DownloadState
        do {
            guard let record = records[id] else { return }
            if waits.isWaited(id) { waits.resolve(id, with: record.info) }
            guard !record.isFinished else { return }
            state = record.machine.publicState
            releasePartKey(of: record)
        }
        // In one update: each write through the table's subscript allocates its accessor's frame.
        records.update(id) { record in
            record.isFinished = true
            record.details.parsedURL = nil
            record.details.speed = SpeedMeter()
            record.details.live = nil
        }
        metrics.finished(state)
        // Its end is reported by a kept event: the client must see it before it is forgotten.
        if outbox != nil { pins.downloads.insert(id) }
        if groupOf(id) != nil { groupMemberFinished(id) } else { finishedForRetention(id) }
    }

    private func wakeStopWaiters(_ id: DownloadID) {
        guard let waiters = records[id]?.details.stopWaiters, !waiters.isEmpty else { return }
        records[id]?.details.stopWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    func groupOf(_ id: DownloadID) -> String? { records[id]?.group }

    /// Logs a decision about a download, with its ID (and the error's code) as metadata.
    func log(_ level: Logger.Level, _ message: @autoclosure () -> String, _ id: DownloadID, error: HaulError? = nil) {
        let logger = configuration.logger
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = ["haul.download": "\(id)"]
        if let error { metadata["haul.error"] = "\(error.code)" }
        logger.log(level: level, "\(message())", metadata: metadata)
    }
}
