import Testing
@testable import Haul

@Suite("Download state machine")
struct DownloadStateMachineTests {
    let transient = HaulError(.connectionFailed, "reset")

    /// A granted slot starts the first attempt, and success completes the download.
    @Test func slotStartsFirstAttemptAndSuccessCompletes() {
        var machine = DownloadStateMachine()
        #expect(machine.slotGranted() == .startTransfer(attempt: 1))
        #expect(machine.publicState == .running)
        #expect(machine.transferEnded(.succeeded) == .reportCompleted)
        #expect(machine.publicState == .completed)
        #expect(!machine.holdsSlot)
    }

    /// A transient failure with a retry delay waits, keeps its slot, and the timer starts the next attempt.
    @Test func transientFailureSchedulesRetry() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        #expect(machine.transferEnded(.failed(transient, retryDelay: .seconds(2))) == .scheduleRetry(attempt: 2, delay: .seconds(2)))
        #expect(machine.publicState == .running)
        #expect(machine.holdsSlot)
        #expect(machine.retryTimerFired() == .startTransfer(attempt: 2))
    }

    /// A failure without a retry delay fails the download with that error.
    @Test func permanentFailureFails() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        let error = HaulError(.checksumMismatch, "bad")
        #expect(machine.transferEnded(.failed(error, retryDelay: nil)) == .reportFailed(error))
        #expect(machine.publicState == .failed)
    }

    /// Pausing a running download stops its transfer and only reports paused once the transfer has ended.
    @Test func pauseWaitsForTransferToEnd() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        #expect(machine.pause() == .stopTransfer)
        #expect(machine.holdsSlot, "the slot is held until the transfer has really stopped")
        #expect(machine.resume() != .reportRequeued, "cannot requeue while the old transfer may still write")
        #expect(machine.transferEnded(.stopped) == .reportPaused)
        #expect(machine.publicState == .paused)
        #expect(machine.resume() == .reportRequeued)
        #expect(machine.publicState == .queued)
    }

    /// A transfer that completes while being paused is reported completed, not paused.
    @Test func completionRacingPauseIsCompleted() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        _ = machine.pause()
        #expect(machine.transferEnded(.succeeded) == .reportCompleted)
    }

    /// Canceling a running download stops it and discards its part once it has ended.
    @Test func cancelRunningDiscardsAfterStop() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        #expect(machine.cancel() == .stopTransfer)
        #expect(machine.transferEnded(.stopped) == .discardAndReportCanceled)
        #expect(machine.publicState == .canceled)
    }

    /// Pausing or canceling while waiting to retry cancels the timer.
    @Test func pauseAndCancelDuringRetryWait() {
        var paused = DownloadStateMachine(state: .waitingToRetry(attempt: 3))
        #expect(paused.pause() == .cancelRetryAndPause)
        var canceled = DownloadStateMachine(state: .waitingToRetry(attempt: 3))
        #expect(canceled.cancel() == .cancelRetryAndDiscard)
    }

    /// Queued downloads pause and cancel at once, without a transfer to stop (a paused one
    /// keeps its place in the queue).
    @Test func queuedPauseAndCancel() {
        var machine = DownloadStateMachine()
        #expect(machine.pause() == .holdInQueue(then: .reportPaused))
        #expect(machine.cancel() == .discardAndReportCanceled)
    }

    /// Requests that do not fit a finished download are rejected with invalidState, not ignored.
    @Test func finishedDownloadsRejectRequests() {
        var completed = DownloadStateMachine(state: .completed)
        guard case .rejected(let error) = completed.pause() else { Issue.record("pause accepted"); return }
        #expect(error.code == .invalidState)
        guard case .rejected = completed.resume() else { Issue.record("resume accepted"); return }
        guard case .rejected = completed.cancel() else { Issue.record("cancel accepted"); return }
        var canceled = DownloadStateMachine(state: .canceled)
        guard case .rejected = canceled.resume() else { Issue.record("resume of canceled accepted"); return }
    }

    /// A failed download can be resumed (queued again) or canceled.
    @Test func failedCanBeRetriedOrCanceled() {
        var machine = DownloadStateMachine(state: .failed(transient))
        #expect(machine.resume() == .reportRequeued)
        var other = DownloadStateMachine(state: .failed(transient))
        #expect(other.cancel() == .discardAndReportCanceled)
    }

    /// Pausing twice is harmless.
    @Test func pauseIsIdempotent() {
        var machine = DownloadStateMachine(state: .paused)
        #expect(machine.pause() == DownloadStateMachine.Action.none)
    }
}

@Suite("Download state machine: blocked transfers")
struct BlockedTransferTests {
    /// A transfer blocked by a full disk pauses with its reason, and can be resumed later.
    @Test func blockedPausesWithReason() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        let full = HaulError(.diskFull, "no space")
        #expect(machine.transferEnded(.blocked(full)) == .reportPausedBecause(full))
        #expect(machine.publicState == .paused)
        #expect(!machine.holdsSlot)
        #expect(machine.resume() == .reportRequeued)
    }

    /// A transfer that blocks while being canceled is canceled.
    @Test func blockedWhileCanceling() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        _ = machine.cancel()
        #expect(machine.transferEnded(.blocked(HaulError(.diskFull, ""))) == .discardAndReportCanceled)
    }
}

@Suite("Download state machine: restart for a changed request")
struct RestartTransferTests {
    /// A running download asked to restart stops its transfer, keeps its slot, and once the transfer has ended starts again with a fresh count of attempts, whatever ended it.
    @Test(arguments: [
        DownloadStateMachine.TransferOutcome.stopped,
        .failed(HaulError(.connectionFailed, "reset"), retryDelay: .seconds(1)),
        .blocked(HaulError(.diskFull, "no space")),
    ])
    func restartKeepsTheSlotAndStartsAgain(outcome: DownloadStateMachine.TransferOutcome) {
        var machine = DownloadStateMachine(state: .running(attempt: 3))
        #expect(machine.restart() == .stopTransfer)
        #expect(machine.holdsSlot)
        #expect(machine.publicState == .running)
        #expect(machine.restart() == DownloadStateMachine.Action.none, "asking twice stops the transfer once")
        #expect(machine.resume() == DownloadStateMachine.Action.none)
        #expect(machine.transferEnded(outcome) == .restartTransfer(attempt: 1))
        #expect(machine.state == .running(attempt: 1))
        #expect(machine.holdsSlot)
    }

    /// A transfer that completes while being restarted is completed: its verified, placed file is not fetched again.
    @Test func completionRacingRestartIsCompleted() {
        var machine = DownloadStateMachine(state: .running(attempt: 1))
        _ = machine.restart()
        #expect(machine.transferEnded(.succeeded) == .reportCompleted)
        #expect(machine.publicState == .completed)
    }

    /// A pause or cancel during a restart wins: the caller waits for the same transfer's end, and the download is paused or canceled, not started again.
    @Test func pauseOrCancelDuringRestartWins() {
        var paused = DownloadStateMachine(state: .running(attempt: 1))
        _ = paused.restart()
        #expect(paused.pause() == .stopTransfer)
        #expect(paused.transferEnded(.stopped) == .reportPaused)

        var canceled = DownloadStateMachine(state: .running(attempt: 1))
        _ = canceled.restart()
        #expect(canceled.cancel() == .stopTransfer)
        #expect(canceled.transferEnded(.stopped) == .discardAndReportCanceled)
    }

    /// Only a running transfer needs a restart; a download being paused or canceled refuses one.
    @Test func restartInOtherStates() {
        for state: DownloadStateMachine.State in [.queued, .paused, .waitingToRetry(attempt: 2), .completed, .canceled] {
            var machine = DownloadStateMachine(state: state)
            #expect(machine.restart() == DownloadStateMachine.Action.none)
            #expect(machine.state == state)
        }
        for reason: DownloadStateMachine.StopReason in [.pause, .cancel] {
            var machine = DownloadStateMachine(state: .stopping(reason))
            guard case .rejected = machine.restart() else {
                Issue.record("a download stopping for \(reason) accepted a restart")
                continue
            }
        }
    }

    // MARK: Slots

    /// Verified bytes hand the slot over once; a placed file then completes without taking it back.
    @Test func placementHandsTheSlotOverAndCompletes() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        #expect(machine.placementStarted() == .handOverSlot)
        #expect(machine.slotHandedOver)
        #expect(machine.placementStarted() == .none)
        #expect(machine.publicState == .running)
        #expect(machine.transferEnded(.succeeded) == .reportCompleted)
        #expect(!machine.slotHandedOver)
    }

    /// Placing fails after the hand-over: the slot is taken back, then the retry is scheduled
    /// in it; the next attempt starts with no hand-over pending.
    @Test func placementFailureReclaimsTheSlotBeforeRetrying() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        _ = machine.placementStarted()
        let error = HaulError(.fileSystem, "rename failed")
        #expect(machine.transferEnded(.failed(error, retryDelay: .seconds(1)))
            == .reclaimSlot(then: .scheduleRetry(attempt: 2, delay: .seconds(1))))
        #expect(machine.holdsSlot)
        #expect(machine.retryTimerFired() == .startTransfer(attempt: 2))
        #expect(machine.transferEnded(.failed(error, retryDelay: nil)) == .reportFailed(error))
    }

    /// A final placement failure, or a pause during placement, takes the slot back before the
    /// action that releases it; a restart takes it back to run again in it.
    @Test func everyUnsuccessfulEndAfterHandOverReclaims() {
        let error = HaulError(.fileSystem, "rename failed")
        var failing = DownloadStateMachine()
        _ = failing.slotGranted()
        _ = failing.placementStarted()
        #expect(failing.transferEnded(.failed(error, retryDelay: nil)) == .reclaimSlot(then: .reportFailed(error)))

        var paused = DownloadStateMachine()
        _ = paused.slotGranted()
        _ = paused.placementStarted()
        #expect(paused.pause() == .stopTransfer)
        #expect(paused.transferEnded(.stopped) == .reclaimSlot(then: .reportPaused))

        var restarted = DownloadStateMachine()
        _ = restarted.slotGranted()
        _ = restarted.placementStarted()
        #expect(restarted.restart() == .stopTransfer)
        #expect(restarted.transferEnded(.stopped) == .reclaimSlot(then: .restartTransfer(attempt: 1)))

        var blocked = DownloadStateMachine()
        _ = blocked.slotGranted()
        _ = blocked.placementStarted()
        let full = HaulError(.diskFull, "full")
        #expect(blocked.transferEnded(.blocked(full)) == .reclaimSlot(then: .reportPausedBecause(full)))
    }

    /// A queued download paused keeps its place in the scheduler's queue, held; canceled, it
    /// leaves the queue first.
    @Test func queuedDownloadsLeaveTheQueue() {
        var paused = DownloadStateMachine()
        #expect(paused.pause() == .holdInQueue(then: .reportPaused))
        #expect(paused.publicState == .paused)
        var canceled = DownloadStateMachine()
        #expect(canceled.cancel() == .leaveQueue(then: .discardAndReportCanceled))
        #expect(canceled.publicState == .canceled)
        // Paused already: nothing is queued, nothing to leave.
        #expect(paused.cancel() == .discardAndReportCanceled)
    }

    /// Created paused, or found placed at recovery: states reached through the machine too.
    @Test func heldBackAndFoundPlaced() {
        var held = DownloadStateMachine()
        held.heldBack()
        #expect(held.publicState == .paused)
        #expect(held.resume() == .reportRequeued)
        var placed = DownloadStateMachine(state: .queued)
        placed.foundPlaced()
        #expect(placed.publicState == .completed)
    }
}

/// The long wait for a server that is gone: the slot is given back, the due retry asks for
/// one, and pause, cancel, resume and restart keep working in both phases.
@Suite("Download state machine: waiting without a slot")
struct DownloadStateMachineWaitingTests {
    let refused = HaulError(.connectionFailed, "refused")

    /// A failure whose retry waits gives the slot back before scheduling it; the download is
    /// shown queued and waiting; the timer asks for a slot, and the slot starts the attempt.
    @Test func waitingGivesTheSlotBackAndAsksForOneWhenDue() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        #expect(machine.transferEnded(.failed(refused, retryDelay: .seconds(30), waiting: true))
            == .giveUpSlot(then: .scheduleRetry(attempt: 2, delay: .seconds(30))))
        #expect(machine.state == .waitingForServer(attempt: 2))
        #expect(!machine.holdsSlot && machine.isUnderway && machine.isWaitingToRetry)
        #expect(machine.publicState == .queued)
        #expect(machine.retryTimerFired() == .askForSlot)
        #expect(machine.state == .dueForSlot(attempt: 2))
        #expect(machine.publicState == .queued && machine.isWaitingToRetry && !machine.holdsSlot)
        #expect(machine.slotGranted() == .startTransfer(attempt: 2))
        #expect(machine.state == .running(attempt: 2))
        #expect(machine.holdsSlot && !machine.isWaitingToRetry)
        // A quick retry (not waiting) still keeps the slot.
        #expect(machine.transferEnded(.failed(refused, retryDelay: .seconds(1))) == .scheduleRetry(attempt: 3, delay: .seconds(1)))
        #expect(machine.holdsSlot && machine.isWaitingToRetry && machine.publicState == .running)
    }

    /// A hand-over at placement, then a failure that waits: the slot is taken back, then given
    /// back for the wait.
    @Test func placementFailureThatWaitsReclaimsThenGivesUp() {
        var machine = DownloadStateMachine()
        _ = machine.slotGranted()
        _ = machine.placementStarted()
        #expect(machine.transferEnded(.failed(refused, retryDelay: .seconds(5), waiting: true))
            == .reclaimSlot(then: .giveUpSlot(then: .scheduleRetry(attempt: 2, delay: .seconds(5)))))
    }

    /// Paused or canceled while waiting or due: the timer is canceled (the manager gives back
    /// the place ahead of the queue); resume and restart change nothing, the next attempt
    /// uses the new request.
    @Test(arguments: [
        DownloadStateMachine.State.waitingForServer(attempt: 4), .dueForSlot(attempt: 4),
    ])
    func requestsWhileWaiting(state: DownloadStateMachine.State) {
        var paused = DownloadStateMachine(state: state)
        #expect(paused.resume() == DownloadStateMachine.Action.none)
        #expect(paused.restart() == DownloadStateMachine.Action.none)
        #expect(paused.state == state)
        #expect(paused.pause() == .cancelRetryAndPause)
        #expect(paused.publicState == .paused && !paused.isUnderway)
        var canceled = DownloadStateMachine(state: state)
        #expect(canceled.cancel() == .cancelRetryAndDiscard)
        #expect(canceled.publicState == .canceled)
    }
}
