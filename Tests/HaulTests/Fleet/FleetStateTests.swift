@testable import Haul
import Testing

/// What a fleet member's manager keeps about its leases (`FleetState`), without I/O.
@Suite("Fleet state of a manager")
struct FleetStateTests {
    private let one = DownloadID(rawValue: 1)

    private func claim(_ n: UInt64, epoch: Int64) -> ClaimedDownload {
        ClaimedDownload(lease: DownloadLease(id: DownloadID(rawValue: n), owner: "d1", epoch: epoch), host: "h", previousOwner: nil)
    }

    private func fleet(holding claims: [ClaimedDownload]) -> FleetState {
        var fleet = FleetState(membership: FleetMembership(), leasing: NoLeasing())
        fleet.book.claimed(claims, sentAt: .now)
        return fleet
    }

    /// A download lost and claimed again writes again, under the new lease (before, it stayed
    /// in `lost` for good and every write about it was dropped).
    @Test func aDownloadClaimedAgainIsNoLongerLost() {
        var fleet = fleet(holding: [claim(1, epoch: 2)])
        fleet.lost.insert(one)
        fleet.reclaimed(one)
        #expect(!fleet.lost.contains(one))
        #expect(fleet.fence(for: one)?.lease == claim(1, epoch: 2).lease)
    }

    /// A lease lost while the download runs: it stops, and nothing more is written about it.
    @Test func aLostLeaseStopsARunningDownload() {
        var fleet = fleet(holding: [claim(1, epoch: 2)])
        let stops = fleet.leaseLost(one, lease: claim(1, epoch: 2).lease, placing: false)
        #expect(stops)
        #expect(fleet.lost.contains(one) && fleet.fence(for: one) == nil)
    }

    /// A lease found lost (or past its local deadline) while the download places its verified
    /// file: it is not stopped nor forgotten; its completion is fenced by that lease and gives
    /// it back, so the store decides. (It used to be forgotten, and a group it completed was
    /// announced without it: docs/fleet.md gap 8.) The book already dropped the lease.
    @Test func aLostLeaseWhilePlacingIsLeftToTheCompletionsFence() {
        var fleet = fleet(holding: [claim(1, epoch: 2)])
        let lease = claim(1, epoch: 2).lease
        _ = fleet.book.expire(now: .now + .seconds(60))
        let stops = fleet.leaseLost(one, lease: lease, placing: true)
        #expect(!stops)
        #expect(!fleet.lost.contains(one))
        #expect(fleet.fence(for: one)?.lease == lease && fleet.fence(for: one)?.releasing == true)
    }
}

/// A store side that is never reached: the tests above use `FleetState` without I/O.
private struct NoLeasing: DownloadLeasing {
    func claim(session: String, for owner: String, upTo limit: Int, leaseFor duration: Duration) async throws(HaulError) -> [ClaimedDownload] { [] }
    func renew(_ leases: [DownloadLease], for duration: Duration) async throws(HaulError) -> LeaseRenewal { LeaseRenewal(renewed: [], lost: []) }
    func release(_ leases: [DownloadLease]) async throws(HaulError) -> [DownloadLease] { [] }
    func control(
        _ control: FleetControl, of id: DownloadID, session: String, for owner: String, leaseFor duration: Duration
    ) async throws(HaulError) -> ControlOutcome { .unknown }
    func requestedControls(_ leases: [DownloadLease]) async throws(HaulError) -> [DownloadID: FleetControl] { [:] }
}
