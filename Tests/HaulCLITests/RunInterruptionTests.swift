import Haul
@testable import HaulCLI
import Testing

/// How `haul get` treats signals against its run's progress (no processes, no signals sent).
@Suite struct RunInterruptionTests {
    @Test func firstSignalStopsTheOpenManagerAndASecondExits() async {
        let manager = DownloadManager()
        let interruptions = RunInterruption()
        #expect(interruptions.managerOpened(manager))
        guard case .stop(let stopped) = interruptions.received(2) else {
            Issue.record("the first signal must stop the run")
            return
        }
        #expect(stopped === manager)
        #expect(interruptions.interruption == 2)
        guard case .exitNow = interruptions.received(15) else {
            Issue.record("a second signal must exit at once")
            return
        }
        // The first signal is the one reported.
        #expect(interruptions.interruption == 2)
        await manager.shutdown()
    }

    @Test func signalBeforeTheManagerOpensIsActedOnWhenItDoes() async {
        let interruptions = RunInterruption()
        guard case .stop(nil) = interruptions.received(15) else {
            Issue.record("with no manager yet there is nothing to stop")
            return
        }
        let manager = DownloadManager()
        #expect(!interruptions.managerOpened(manager), "the run must stop the manager itself")
        #expect(!interruptions.settle(), "a group completing after the signal does not make the run a success")
        await manager.shutdown()
    }

    @Test func signalAfterTheGroupCompletedChangesNothing() {
        let interruptions = RunInterruption()
        #expect(interruptions.settle())
        guard case .ignore = interruptions.received(2) else {
            Issue.record("the result of a completed run stands")
            return
        }
        #expect(interruptions.interruption == nil)
    }
}
