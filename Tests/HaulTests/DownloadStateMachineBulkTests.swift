import Testing
@testable import Haul

/// Pausing everything and moving in the queue, decided by the machine without I/O.
@Suite("Download state machine: pause all and queue moves")
struct DownloadStateMachineBulkTests {
    typealias Machine = DownloadStateMachine
    let id = DownloadID(rawValue: 7)

    /// A queued download pauses in its place; it never ran and has no transfer to wait for.
    @Test func pauseAllHoldsAQueuedDownload() {
        var machine = Machine()
        #expect(machine.pauseAllRequested() == .init(action: .holdInQueue(then: .reportPaused), ran: false, awaitsStop: false))
        #expect(machine.state == .paused)
    }

    /// A running download is stopped, ran, and must be waited for.
    @Test func pauseAllStopsARunningDownload() {
        var machine = Machine(state: .running(attempt: 2))
        #expect(machine.pauseAllRequested() == .init(action: .stopTransfer, ran: true, awaitsStop: true))
        #expect(machine.state == .stopping(.pause))
    }

    /// Waiting to retry, in either phase, counts as having run; the timer is canceled.
    @Test(arguments: [Machine.State.waitingToRetry(attempt: 2), .waitingForServer(attempt: 7), .dueForSlot(attempt: 7)])
    func pauseAllCancelsRetryWaits(state: Machine.State) {
        var machine = Machine(state: state)
        #expect(machine.pauseAllRequested() == .init(action: .cancelRetryAndPause, ran: true, awaitsStop: false))
        #expect(machine.state == .paused)
    }

    /// Paused, finished and canceling downloads are left alone, unchanged.
    @Test(arguments: [
        Machine.State.paused, .completed, .failed(HaulError(.httpStatus, "404")), .canceled, .stopping(.cancel),
    ])
    func pauseAllLeavesOthersAlone(state: Machine.State) {
        var machine = Machine(state: state)
        #expect(machine.pauseAllRequested() == nil)
        #expect(machine.state == state)
    }

    /// A download already pausing is not stopped twice and is not awaited again by this request.
    @Test func pauseAllOnAPausingDownloadDoesNothingMore() {
        var machine = Machine(state: .stopping(.pause))
        #expect(machine.pauseAllRequested() == .init(action: .none, ran: true, awaitsStop: false))
    }

    /// Queued and paused downloads with a place in the queue may move.
    @Test(arguments: [Machine.State.queued, .paused])
    func queuedAndPausedMove(state: Machine.State) {
        #expect(Machine(state: state).queueMoveRefusal(of: id, returning: false, hasPlace: true) == nil)
    }

    /// One waiting for its server is refused with the reason, whatever its place.
    @Test func returningDownloadsDoNotMove() {
        let refusal = Machine(state: .dueForSlot(attempt: 7)).queueMoveRefusal(of: id, returning: true, hasPlace: false)
        #expect(refusal?.code == .invalidState)
        #expect(refusal?.message.contains("waiting for its server") == true)
    }

    /// Running, finished, and placeless downloads are refused, naming their state.
    @Test(arguments: [
        (Machine.State.running(attempt: 1), true), (.completed, false), (.failed(HaulError(.httpStatus, "404")), false), (.queued, false),
    ])
    func othersDoNotMove(state: Machine.State, hasPlace: Bool) {
        let machine = Machine(state: state)
        let refusal = machine.queueMoveRefusal(of: id, returning: false, hasPlace: hasPlace)
        #expect(refusal?.code == .invalidState)
        #expect(refusal?.message.contains("is \(machine.publicState.rawValue), not waiting") == true)
    }
}
