@testable import Haul
import Testing

/// A fleet member's transfers stopped for a lost lease, and claims of their downloads that
/// come back before those transfers ended: without I/O.
@Suite("Stopping transfers of a fleet member")
struct StoppingTransfersTests {
    private func claim(_ n: UInt64, epoch: Int64) -> ClaimedDownload {
        ClaimedDownload(lease: DownloadLease(id: DownloadID(rawValue: n), owner: "d1", epoch: epoch), host: "h", previousOwner: "d1")
    }

    private let one = DownloadID(rawValue: 1)

    /// A download abandoned while its transfer still runs and claimed again before that
    /// transfer ended: the claim waits; the old transfer's reports are dropped, its end
    /// included, which hands the claim back to be taken. Later ends are the new transfer's.
    @Test func aClaimOfADownloadWhoseOldTransferIsStoppingWaitsForItsEnd() {
        var stopping = StoppingTransfers()
        stopping.abandoned(one, endComing: true)
        #expect(stopping.isStopping(one))
        let waits = !stopping.claimed(claim(1, epoch: 3))
        #expect(waits)
        let oldEnd = stopping.transferEnded(one)
        #expect(oldEnd == .stale(take: claim(1, epoch: 3)))
        #expect(!stopping.isStopping(one))
        let takenNow = stopping.claimed(claim(1, epoch: 3))
        #expect(takenNow)
        let newEnd = stopping.transferEnded(one)
        #expect(newEnd == .current)
        #expect(stopping.isEmpty)
    }

    /// A transfer that had no end coming (waiting for a retry, or its end already taken) leaves
    /// nothing to wait for: a claim is taken at once, and its ends are its own.
    @Test func withoutAnEndComingAClaimIsTakenAtOnce() {
        var stopping = StoppingTransfers()
        stopping.abandoned(one, endComing: false)
        #expect(!stopping.isStopping(one))
        let takenNow = stopping.claimed(claim(1, epoch: 2))
        #expect(takenNow)
        let end = stopping.transferEnded(one)
        #expect(end == .current)
    }

    /// A waiting claim whose lease is lost in turn goes with it; the old transfer's end is
    /// still dropped, and nothing is handed back.
    @Test func aWaitingClaimLostInTurnIsNotTaken() {
        var stopping = StoppingTransfers()
        stopping.abandoned(one, endComing: true)
        let waits = !stopping.claimed(claim(1, epoch: 2))
        #expect(waits)
        stopping.abandoned(one, endComing: false)
        let oldEnd = stopping.transferEnded(one)
        #expect(oldEnd == .stale(take: nil))
        #expect(stopping.isEmpty)
    }
}
