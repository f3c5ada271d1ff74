import Testing
@testable import Haul

/// How a changed request is taken, decided by the machine without I/O.
@Suite("Download state machine: replacing the request")
struct DownloadStateMachineReplacingTests {
    typealias Machine = DownloadStateMachine
    let id = DownloadID(rawValue: 9)
    static let waiting: [Machine.State] = [.waitingToRetry(attempt: 2), .waitingForServer(attempt: 7), .dueForSlot(attempt: 7)]

    /// A running transfer on the same host restarts in its slot; a restart under way is joined.
    @Test func sameHostRestartsInTheSlot() {
        #expect(Machine(state: .running(attempt: 1)).replacementPlan(sameHost: true) == .restartInSlot(joining: false))
        #expect(Machine(state: .stopping(.restart)).replacementPlan(sameHost: true) == .restartInSlot(joining: true))
    }

    /// Moving to another host while running or waiting to retry queues again for that host.
    @Test(arguments: [Machine.State.running(attempt: 1)] + waiting)
    func otherHostRequeues(state: Machine.State) {
        #expect(Machine(state: state).replacementPlan(sameHost: false) == .pauseSwapAndRequeue)
    }

    /// Everything else swaps in place (which may then be refused).
    @Test(arguments: [Machine.State.queued, .paused, .completed, .canceled, .stopping(.pause), .stopping(.cancel)] + waiting)
    func restSwapsInPlace(state: Machine.State) {
        #expect(Machine(state: state).replacementPlan(sameHost: true) == .swapInPlace)
        if case .waitingToRetry = state { return }
        if case .waitingForServer = state { return }
        if case .dueForSlot = state { return }
        #expect(Machine(state: state).replacementPlan(sameHost: false) == .swapInPlace)
    }

    /// A swap is allowed while no transfer runs and the download is not finished.
    @Test(arguments: [Machine.State.queued, .paused] + waiting)
    func idleStatesAllowTheSwap(state: Machine.State) {
        #expect(Machine(state: state).idleReplacementRefusal(of: id) == nil)
    }

    /// Finished downloads are refused naming their state; starting or stopping ones, saying to wait.
    @Test func busyAndFinishedStatesRefuse() {
        let completed = Machine(state: .completed).idleReplacementRefusal(of: id)
        #expect(completed?.code == .invalidState)
        #expect(completed?.message == "a completed download cannot be changed")
        for state in [Machine.State.running(attempt: 1), .stopping(.pause), .stopping(.restart)] {
            let refusal = Machine(state: state).idleReplacementRefusal(of: id)
            #expect(refusal?.code == .invalidState)
            #expect(refusal?.message.contains("is starting or stopping") == true)
        }
    }
}
