@testable import Haul
import Testing

/// Which runnable downloads a claim takes, without a database.
@Suite("Lease claim plan")
struct LeaseClaimPlanTests {
    private func candidate(_ n: Int, _ host: String, expiredOwner: String? = nil) -> LeaseClaimPlan.Candidate {
        LeaseClaimPlan.Candidate(id: DownloadID(rawValue: UInt64(n)), host: host, expiredOwner: expiredOwner)
    }

    /// The session's room is its limit minus every daemon's live leases, and no more than the
    /// daemon asked for.
    @Test func roomIsTheSessionsLimitMinusLiveLeasesCappedByTheDaemon() {
        var plan = LeaseClaimPlan(settings: SessionSettings(maxConcurrentDownloads: 5), wanted: 10, liveLeases: ["a": 2, "b": 1])
        #expect(plan.remaining == 2)
        let taken = [(1, "a"), (2, "c"), (3, "c")].map { plan.offer(candidate($0, $1)) }
        #expect(taken == [true, true, false])
        #expect(plan.chosen.map(\.id.rawValue) == [1, 2])

        var capped = LeaseClaimPlan(settings: SessionSettings(maxConcurrentDownloads: 50), wanted: 1, liveLeases: [:])
        let cappedTaken = [(1, "a"), (2, "a")].map { capped.offer(candidate($0, $1)) }
        #expect(cappedTaken == [true, false])
        #expect(LeaseClaimPlan(settings: SessionSettings(maxConcurrentDownloads: 2), wanted: 3, liveLeases: ["a": 3]).remaining == 0)
    }

    /// A host at its limit is passed over without blocking other hosts' downloads behind it,
    /// and is named for the scan to skip.
    @Test func aFullHostIsPassedOverNotBlocking() {
        var plan = LeaseClaimPlan(
            settings: SessionSettings(maxConcurrentDownloads: 10, maxDownloadsPerHost: 2), wanted: 10, liveLeases: ["a": 1, "z": 2])
        #expect(plan.fullHosts == ["z"])
        let taken = [(1, "a"), (2, "a"), (3, "z"), (4, "b"), (5, "b")].map { plan.offer(candidate($0, $1)) }
        #expect(taken == [true, false, false, true, true])
        #expect(plan.fullHosts == ["a", "b", "z"])
        #expect(plan.chosen.map(\.id.rawValue) == [1, 4, 5])
    }

    /// Without a per-host limit, one host may take every slot; a takeover keeps the owner it
    /// takes from.
    @Test func withoutAPerHostLimitOneHostTakesAll() {
        var plan = LeaseClaimPlan(settings: SessionSettings(maxConcurrentDownloads: 3), wanted: 5, liveLeases: [:])
        #expect(plan.fullHosts.isEmpty)
        for n in 1...4 { plan.offer(candidate(n, "a", expiredOwner: n == 2 ? "d1" : nil)) }
        #expect(plan.chosen.map(\.id.rawValue) == [1, 2, 3])
        #expect(plan.chosen.map(\.expiredOwner) == [nil, "d1", nil])
    }

    /// A daemon with no free slot takes nothing.
    @Test func aDaemonWithoutSlotsTakesNothing() {
        var plan = LeaseClaimPlan(settings: SessionSettings(), wanted: 0, liveLeases: [:])
        #expect(plan.remaining == 0)
        let taken = plan.offer(candidate(1, "a"))
        #expect(!taken)
        #expect(LeaseClaimPlan(settings: SessionSettings(), wanted: -3, liveLeases: [:]).remaining == 0)
    }
}
