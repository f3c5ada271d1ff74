import Foundation
import Testing
@testable import Haul

/// The choice after a failed transfer, made by the machine alone: blocked, retry, wait or fail.
@Suite("Download state machine: failed transfers")
struct DownloadStateMachineFailureTests {
    let added = Date(timeIntervalSince1970: 1_000_000)
    let quick = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(30))

    func attempt(_ error: HaulError, made: Int, after seconds: Double = 1, deadline: Date? = nil) -> DownloadStateMachine.FailedAttempt {
        DownloadStateMachine.FailedAttempt(
            error: error, attemptsMade: made, addedAt: added, requestDeadline: deadline,
            now: added.addingTimeInterval(seconds), jitter: 1)
    }

    func running(attempt: Int) -> DownloadStateMachine {
        DownloadStateMachine(state: .running(attempt: attempt))
    }

    /// A full disk or a broken file system pauses with the reason, whatever the policy allows;
    /// the action records the error itself.
    @Test(arguments: [HaulError.Code.diskFull, .fileSystem])
    func diskAndFileSystemErrorsBlock(code: HaulError.Code) {
        var machine = running(attempt: 1)
        let error = HaulError(code, "no space")
        let verdict = machine.transferFailed(attempt(error, made: 1), policy: .background)
        #expect(verdict == .init(action: .reportPausedBecause(error), recordedError: nil))
        #expect(machine.state == .paused)
    }

    /// A fleet member that took a download over and finds its part file locked by another
    /// writer (the previous owner, on this machine, still stopping its transfer) tries again
    /// shortly, keeping its slot; without a lease (one daemon, or `haul get`) the same error
    /// fails at once as before, and so does a leased download once it has waited long enough.
    @Test func aPartFileHeldElsewhereIsWaitedForOnlyUnderALease() {
        let error = HaulError(.fileExists, "being written by another download", underlying: PartFile.HeldElsewhere())
        #expect(PartFile.isHeldElsewhere(error))
        #expect(!PartFile.isHeldElsewhere(HaulError(.fileExists, "x.bin already exists")))
        func failed(made: Int, leased: Bool) -> DownloadStateMachine.FailedAttempt {
            var failed = attempt(error, made: made)
            failed.partFileHeldElsewhere = true
            failed.leased = leased
            return failed
        }

        var leased = running(attempt: 1)
        let verdict = leased.transferFailed(failed(made: 1, leased: true), policy: .background)
        #expect(verdict == .init(action: .scheduleRetry(attempt: 2, delay: DownloadStateMachine.heldPartRetryDelay), recordedError: error))
        #expect(leased.state == .waitingToRetry(attempt: 2))

        var alone = running(attempt: 1)
        let failedAlone = alone.transferFailed(failed(made: 1, leased: false), policy: .background)
        #expect(failedAlone.action == .reportFailed(error))
        #expect(alone.state == .failed(error))

        let last = DownloadStateMachine.heldPartAttempts
        var waitedEnough = running(attempt: last)
        let gaveUp = waitedEnough.transferFailed(failed(made: last, leased: true), policy: .background)
        #expect(gaveUp.action == .reportFailed(error))
    }

    /// A transient error within the quick retries schedules the next attempt, keeping the slot.
    @Test func transientErrorRetriesQuickly() {
        var machine = running(attempt: 1)
        let error = HaulError(.connectionFailed, "reset")
        let verdict = machine.transferFailed(attempt(error, made: 1), policy: quick)
        #expect(verdict == .init(action: .scheduleRetry(attempt: 2, delay: .seconds(1)), recordedError: error))
        #expect(machine.state == .waitingToRetry(attempt: 2))
    }

    /// Quick retries used up and no waiting allowed: the download fails with the attempt's error.
    @Test func transientErrorFailsWhenRetriesAreUsedUp() {
        var machine = running(attempt: 3)
        let error = HaulError(.connectionFailed, "reset")
        let verdict = machine.transferFailed(attempt(error, made: 3), policy: quick)
        #expect(verdict == .init(action: .reportFailed(error), recordedError: error))
        #expect(machine.state == .failed(error))
    }

    /// Quick retries used up with waiting allowed: the slot is given back and a retry waits.
    @Test func transientErrorWaitsForTheServer() {
        var machine = running(attempt: 3)
        let error = HaulError(.connectionFailed, "refused")
        var waiting = quick
        waiting.waitLimit = .seconds(3600)
        let verdict = machine.transferFailed(attempt(error, made: 3), policy: waiting)
        #expect(verdict == .init(action: .giveUpSlot(then: .scheduleRetry(attempt: 4, delay: .seconds(4))), recordedError: error))
        #expect(machine.state == .waitingForServer(attempt: 4))
    }

    /// Past the download's own deadline the wait ends: it fails with a deadline error, which is
    /// what it shows.
    @Test func waitingEndsAtTheDeadline() {
        var machine = running(attempt: 3)
        let error = HaulError(.connectionFailed, "refused")
        let verdict = machine.transferFailed(attempt(error, made: 3, after: 60, deadline: added.addingTimeInterval(30)), policy: quick)
        guard case .reportFailed(let reported) = verdict.action else {
            Issue.record("expected a failure, got \(verdict.action)")
            return
        }
        #expect(reported.code == .deadlineExceeded)
        #expect(verdict.recordedError == reported)
    }

    /// A permanent error fails at once, even with every retry left.
    @Test func permanentErrorFails() {
        var machine = running(attempt: 1)
        let error = HaulError(.checksumMismatch, "bad")
        let verdict = machine.transferFailed(attempt(error, made: 1), policy: .background)
        #expect(verdict == .init(action: .reportFailed(error), recordedError: error))
    }

    /// A download told to pause or cancel stops as told when its transfer fails meanwhile,
    /// and still shows the attempt's error; a blocked one as well, without recording it.
    @Test func stoppingDownloadsStopAsTold() {
        let error = HaulError(.connectionFailed, "reset")
        var paused = DownloadStateMachine(state: .stopping(.pause))
        #expect(paused.transferFailed(attempt(error, made: 1), policy: quick) == .init(action: .reportPaused, recordedError: error))
        var canceled = DownloadStateMachine(state: .stopping(.cancel))
        let full = HaulError(.diskFull, "full")
        #expect(canceled.transferFailed(attempt(full, made: 1), policy: quick) == .init(action: .discardAndReportCanceled, recordedError: nil))
    }
}

/// A retry timer that wakes late goes ahead only while the download still waits for it.
@Suite("Download state machine: late retry timers")
struct DownloadStateMachineRetryTimerTests {
    /// In either waiting phase the timer's usual action follows.
    @Test func waitingDownloadsGoAhead() {
        var quick = DownloadStateMachine(state: .waitingToRetry(attempt: 2))
        #expect(quick.retryTimerFiredIfWaiting() == .startTransfer(attempt: 2))
        var waiting = DownloadStateMachine(state: .waitingForServer(attempt: 7))
        #expect(waiting.retryTimerFiredIfWaiting() == .askForSlot)
        #expect(waiting.state == .dueForSlot(attempt: 7))
    }

    /// Paused, canceled, running again or already due: nothing happens and nothing changes.
    @Test(arguments: [
        DownloadStateMachine.State.paused, .canceled, .running(attempt: 3), .dueForSlot(attempt: 7), .queued,
    ])
    func othersIgnoreTheTimer(state: DownloadStateMachine.State) {
        var machine = DownloadStateMachine(state: state)
        #expect(machine.retryTimerFiredIfWaiting() == nil)
        #expect(machine.state == state)
    }
}
