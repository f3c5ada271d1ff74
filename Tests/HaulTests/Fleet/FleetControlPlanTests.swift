@testable import Haul
import Testing

/// What a pause, resume or cancel through a daemon that does not hold the download does,
/// decided from the row alone (`FleetControlPlan`), without I/O.
@Suite("Fleet control plan")
struct FleetControlPlanTests {
    static func row(_ state: DownloadState, held: Bool, pending: FleetControl? = nil) -> FleetControlPlan.Row {
        FleetControlPlan.Row(state: state, held: held, pending: pending)
    }

    @Test func aDownloadAnotherDaemonRunsIsAskedOfItsOwner() {
        #expect(FleetControlPlan.decide(.pause, row: Self.row(.running, held: true)) == .request(.pause))
        #expect(FleetControlPlan.decide(.cancel, row: Self.row(.running, held: true)) == .request(.cancel))
        #expect(FleetControlPlan.decide(.pause, row: Self.row(.queued, held: true)) == .request(.pause))
        // A cancel asked after a pause that was not carried out yet replaces it.
        #expect(FleetControlPlan.decide(.cancel, row: Self.row(.running, held: true, pending: .pause)) == .request(.cancel))
    }

    @Test func aDownloadNobodyHoldsIsControlledByTheDaemonAsked() {
        // Queued, paused, failed, or running with its owner's lease expired (killed).
        #expect(FleetControlPlan.decide(.pause, row: Self.row(.queued, held: false)) == .takeLease)
        #expect(FleetControlPlan.decide(.pause, row: Self.row(.running, held: false, pending: .pause)) == .takeLease)
        for state in [DownloadState.queued, .running, .paused, .failed] {
            #expect(FleetControlPlan.decide(.cancel, row: Self.row(state, held: false)) == .takeLease, "\(state)")
        }
        #expect(FleetControlPlan.decide(.resume, row: Self.row(.paused, held: false)) == .takeLease)
        #expect(FleetControlPlan.decide(.resume, row: Self.row(.failed, held: false)) == .takeLease)
    }

    @Test func aResumeWithdrawsAPauseNotCarriedOutYet() {
        #expect(FleetControlPlan.decide(.resume, row: Self.row(.running, held: true, pending: .pause)) == .withdraw)
        #expect(FleetControlPlan.decide(.resume, row: Self.row(.running, held: true)) == .nothing)
        #expect(FleetControlPlan.decide(.resume, row: Self.row(.queued, held: false)) == .nothing)
        // A cancel asked is not taken back by a resume.
        #expect(FleetControlPlan.decide(.resume, row: Self.row(.running, held: true, pending: .cancel)) == .nothing)
    }

    @Test func whatALocalControlRefusesIsRefused() {
        #expect(FleetControlPlan.decide(.pause, row: nil) == .unknown)
        for state in [DownloadState.completed, .failed, .canceled] {
            guard case .refused(let error) = FleetControlPlan.decide(.pause, row: Self.row(state, held: false)) else {
                Issue.record("pause of a \(state) download not refused")
                continue
            }
            #expect(error.code == .invalidState)
        }
        guard case .refused = FleetControlPlan.decide(.cancel, row: Self.row(.completed, held: false)) else {
            Issue.record("cancel of a completed download not refused")
            return
        }
        guard case .refused = FleetControlPlan.decide(.resume, row: Self.row(.canceled, held: false)) else {
            Issue.record("resume of a canceled download not refused")
            return
        }
        guard case .refused = FleetControlPlan.decide(.pause, row: Self.row(.running, held: true, pending: .cancel)) else {
            Issue.record("pause of a download being canceled not refused")
            return
        }
        // Being controlled by another daemon right now (held while paused): try again later.
        guard case .refused = FleetControlPlan.decide(.resume, row: Self.row(.paused, held: true)) else {
            Issue.record("resume of a paused download another daemon holds not refused")
            return
        }
        #expect(FleetControlPlan.decide(.pause, row: Self.row(.paused, held: false)) == .nothing)
        #expect(FleetControlPlan.decide(.cancel, row: Self.row(.canceled, held: false)) == .nothing)
    }
}
