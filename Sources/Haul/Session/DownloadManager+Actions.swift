import Foundation

/// Carrying out the state machines' actions: starting and stopping transfer tasks, retry
/// timers, slots, and the events and group bookkeeping that follow each transition.
extension DownloadManager {
    /// Starts queued downloads while the scheduler has free slots.
    func admitQueued() {
        guard !isShutDown else { return }
        for id in scheduler.admit() {
            guard var record = records[id] else { continue }
            let action = record.machine.slotGranted()
            records[id] = record
            perform(action, for: id)
        }
    }

    func perform(_ action: DownloadStateMachine.Action, for id: DownloadID) {
        switch action {
        // Starting is not worth a write: recovery treats running and queued alike.
        case .none, .rejected, .stopTransfer, .startTransfer: break
        default: markDirty(id)
        }
        switch action {
        case .none, .rejected:
            break
        case .startTransfer(let attempt):
            startTransfer(id, attempt: attempt)
        case .stopTransfer:
            records[id]?.task?.cancel()
        case .scheduleRetry(let attempt, let delay):
            scheduleRetry(id, attempt: attempt, delay: delay)
        case .cancelRetryAndPause:
            records[id]?.retryTimer?.cancel()
            records[id]?.retryTimer = nil
            releaseSlot(id)
            hub.emit(.paused(id, reason: nil))
        case .cancelRetryAndDiscard:
            records[id]?.retryTimer?.cancel()
            records[id]?.retryTimer = nil
            releaseSlot(id)
            discard(id)
        case .reportPaused:
            releaseSlot(id)
            records[id]?.info.progress.bytesPerSecond = 0
            hub.emit(.paused(id, reason: nil))
            wakeStopWaiters(id)
        case .reportPausedBecause(let error):
            releaseSlot(id)
            records[id]?.info.error = error
            records[id]?.info.progress.bytesPerSecond = 0
            hub.emit(.paused(id, reason: error))
            wakeStopWaiters(id)
        case .discardAndReportCanceled:
            releaseSlot(id)
            discard(id)
            wakeStopWaiters(id)
        case .reportCompleted:
            releaseSlot(id)
            guard let record = records[id] else { return }
            hub.emit(.completed(currentInfo(record)))
            finish(id)
            wakeStopWaiters(id)
        case .reportFailed(let error):
            releaseSlot(id)
            records[id]?.info.error = error
            records[id]?.info.progress.bytesPerSecond = 0
            guard let record = records[id] else { return }
            hub.emit(.failed(currentInfo(record)))
            finish(id)
        case .reportRequeued:
            guard let record = records[id] else { return }
            if record.isFinished {
                records[id]?.isFinished = false
                if groupOf(id) != nil { groupMemberReopened(id) }
            }
            partKeysInUse[record.partKey] = id
            records[id]?.info.error = nil
            scheduler.enqueue(id, host: record.host, priority: record.info.request.priority)
            hub.emit(.resumed(id))
            admitQueued()
        }
    }

    private func startTransfer(_ id: DownloadID, attempt: Int) {
        guard var record = records[id] else { return }
        var transfer = record.transfer ?? TransferState(
            request: record.info.request, partKey: record.partKey, validator: record.durable.validator,
            expectedLength: record.durable.expectedLength, durableOffset: record.durable.durableOffset,
            finalURL: record.info.finalURL, segments: record.durable.segments)
        record.transfer = nil
        record.info.attempts += 1
        let runner = self.runner
        let live = record.live ?? LiveTransfer()
        record.live = live
        let hub = self.hub
        let reporter = TransferReporter(
            started: { resumedFrom, finalURL in
                hub.emit(.started(id, resumedFrom: resumedFrom, finalURL: finalURL))
            },
            checkpoint: { checkpoint in await self.recordCheckpoint(id, checkpoint) },
            willPlace: { (intent) async throws(HaulError) in try await self.recordPlacement(id, intent) })
        record.task = Task {
            let result = await runner.run(&transfer, live: live, reporter: reporter)
            self.transferEnded(id, transfer: transfer, result: result)
        }
        records[id] = record
        startTickerIfNeeded()
    }

    private func transferEnded(_ id: DownloadID, transfer: TransferState, result: TransferResult) {
        guard var record = records[id] else { return }
        record.transfer = transfer
        record.task = nil
        record.info.finalURL = transfer.finalURL ?? record.info.finalURL
        if let snapshot = record.live?.snapshot {
            record.info.progress.completedBytes = snapshot.completedBytes
            record.info.progress.expectedBytes = snapshot.expectedBytes ?? record.info.progress.expectedBytes
        }
        let outcome: DownloadStateMachine.TransferOutcome
        switch result {
        case .completed(let placement, let checksums, let bytes):
            record.info.fileURL = URL(fileURLWithPath: placement.path)
            // Size and mtime as placed: a later change by someone else is noticed by them.
            let placed = SystemCalls.describe(placement.path)
            record.durable.fileSize = placed?.size
            record.durable.fileModified = placed.map { Date(timeIntervalSince1970: $0.modified) }
            record.durable.expectedLength = bytes
            record.durable.durableOffset = bytes
            record.info.skipped = placement.skipped
            record.info.verifiedChecksums = checksums
            record.info.error = nil
            record.info.progress = TransferProgress(completedBytes: bytes, expectedBytes: bytes)
            // The part file and its state are spent.
            record.transfer = nil
            outcome = .succeeded
        case .failed(let error) where error.code == .diskFull || error.code == .fileSystem:
            // Retrying cannot help until someone frees space or fixes the file system: wait
            // paused with every durable byte kept, and say why.
            outcome = .blocked(error)
        case .failed(let error):
            record.info.error = error
            let delay = configuration.retry.delay(
                after: error, nextAttempt: record.info.attempts + 1, jitter: Double.random(in: 0..<1))
            outcome = .failed(error, retryDelay: delay)
        case .stopped:
            outcome = .stopped
        }
        let action = record.machine.transferEnded(outcome)
        records[id] = record
        perform(action, for: id)
    }

    private func scheduleRetry(_ id: DownloadID, attempt: Int, delay: Duration) {
        guard let error = records[id]?.info.error else { return }
        hub.emit(.retrying(id, attempt: attempt, delay: delay, error: error))
        records[id]?.retryTimer = Task {
            do { try await Task.sleep(for: delay) } catch { return }
            self.retryTimerFired(id)
        }
    }

    private func retryTimerFired(_ id: DownloadID) {
        // A timer canceled after it woke must not restart a download that was paused meanwhile.
        guard var record = records[id], case .waitingToRetry = record.machine.state, !Task.isCancelled else { return }
        record.retryTimer = nil
        let action = record.machine.retryTimerFired()
        records[id] = record
        perform(action, for: id)
    }

    private func releaseSlot(_ id: DownloadID) {
        guard scheduler.runningHosts[id] != nil else { return }
        scheduler.finished(id)
        admitQueued()
    }

    private func discard(_ id: DownloadID) {
        guard let record = records[id] else { return }
        let part = record.transfer?.part ?? PartFile(directory: record.info.request.directory.path, key: record.partKey)
        part.discard()
        records[id]?.transfer = nil
        records[id]?.durable = DurableFields()
        hub.emit(.canceled(id))
        finish(id)
    }

    /// Bookkeeping when a download reaches a terminal state, after its event was emitted (so
    /// that a group's completion always follows its members' events).
    private func finish(_ id: DownloadID) {
        guard let record = records[id] else { return }
        let waiters = record.finishWaiters
        records[id]?.finishWaiters = []
        for waiter in waiters { waiter.resume(returning: currentInfo(record)) }
        guard !record.isFinished else { return }
        records[id]?.isFinished = true
        if partKeysInUse[record.partKey] == id { partKeysInUse[record.partKey] = nil }
        records[id]?.speed = SpeedMeter()
        records[id]?.live = nil
        if groupOf(id) != nil { groupMemberFinished(id) }
    }

    private func wakeStopWaiters(_ id: DownloadID) {
        guard let waiters = records[id]?.stopWaiters, !waiters.isEmpty else { return }
        records[id]?.stopWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    func groupOf(_ id: DownloadID) -> String? { records[id]?.info.group }
}
