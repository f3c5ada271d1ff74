import Testing
@testable import Haul

/// What a restored download resumes as, and which actions the store must see, without I/O.
@Suite("Download state machine: recovery and store writes")
struct DownloadStateMachineRecoveryTests {
    typealias Machine = DownloadStateMachine

    /// Running and queued downloads are queued again; the rest keep their state, a failed one
    /// its stored error or a generic one.
    @Test func storedStatesMapToMachineStates() {
        let error = HaulError(.httpStatus, "404")
        #expect(Machine.restoredState(.running, error: nil) == .queued)
        #expect(Machine.restoredState(.queued, error: nil) == .queued)
        #expect(Machine.restoredState(.paused, error: error) == .paused)
        #expect(Machine.restoredState(.completed, error: nil) == .completed)
        #expect(Machine.restoredState(.canceled, error: nil) == .canceled)
        #expect(Machine.restoredState(.failed, error: error) == .failed(error))
        guard case .failed(let generic) = Machine.restoredState(.failed, error: nil) else {
            Issue.record("a failed row must restore failed")
            return
        }
        #expect(generic.code == .connectionFailed)
    }

    /// A queued download waits for a slot when interrupted downloads continue, and is held
    /// back paused when they do not; other states are not touched either way.
    @Test func queuedDownloadsContinueOrAreHeldBack() {
        var continuing = Machine()
        continuing.restored(continueInterrupted: true)
        #expect(continuing.state == .queued)
        #expect(continuing.restoredPlace == .waiting)
        var held = Machine()
        held.restored(continueInterrupted: false)
        #expect(held.state == .paused)
        #expect(held.restoredPlace == .held)
        for state in [Machine.State.paused, .completed, .canceled] {
            var machine = Machine(state: state)
            machine.restored(continueInterrupted: false)
            #expect(machine.state == state)
        }
    }

    /// Finished downloads take no place in the queue; one found placed is completed.
    @Test func finishedDownloadsHaveNoPlace() {
        for state in [Machine.State.completed, .canceled, .failed(HaulError(.httpStatus, "404"))] {
            #expect(Machine(state: state).restoredPlace == nil)
        }
        var placed = Machine()
        placed.foundPlaced()
        #expect(placed.restoredPlace == nil)
    }

    /// The actions that change a stored row are written; starting and slot moves are not, and
    /// a wrapping action leaves the write to the action it wraps.
    @Test func writtenActionsAreListed() {
        let error = HaulError(.connectionFailed, "reset")
        let written: [Machine.Action] = [
            .scheduleRetry(attempt: 2, delay: .seconds(1)), .cancelRetryAndPause, .cancelRetryAndDiscard, .reportPaused,
            .reportPausedBecause(error), .discardAndReportCanceled, .reportCompleted, .reportFailed(error), .reportRequeued,
            .restartTransfer(attempt: 1),
        ]
        let notWritten: [Machine.Action] = [
            .none, .rejected(error), .startTransfer(attempt: 1), .stopTransfer, .askForSlot, .handOverSlot,
            .giveUpSlot(then: .scheduleRetry(attempt: 2, delay: .seconds(1))), .reclaimSlot(then: .reportFailed(error)),
            .leaveQueue(then: .discardAndReportCanceled), .holdInQueue(then: .reportPaused),
        ]
        for action in written { #expect(action.isWrittenToStore, "\(action)") }
        for action in notWritten { #expect(!action.isWrittenToStore, "\(action)") }
    }
}
