import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// Claims, renewals, releases and fences of the PostgreSQL store, one daemon at a time
/// (`ConcurrentClaimTests` runs them together).
@Suite("Leases", .timeLimit(.minutes(3)))
struct LeaseStoreTests {
    private func ids(_ claimed: [ClaimedDownload]) -> [DownloadID] { claimed.map(\.lease.id) }

    /// A claim takes runnable downloads in queue order (priority, then position), gives each
    /// epoch 1 on its first claim, and never hands out a download already leased.
    @Test func claimsFollowQueueOrderAndStartEpochs() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 10))
        let low = try await fixture.add(1...4)
        let high = try await fixture.add(5...6, priority: 5)
        let one = try await fixture.daemon(), two = try await fixture.daemon()

        let first = try await one.claim(session: fixture.session, for: "d1", upTo: 3, leaseFor: .seconds(60))
        #expect(ids(first) == [high[0], high[1], low[0]])
        #expect(first.allSatisfy { $0.lease.epoch == 1 && $0.lease.owner == "d1" && !$0.isTakeover })
        let second = try await two.claim(session: fixture.session, for: "d2", upTo: 5, leaseFor: .seconds(60))
        #expect(ids(second) == Array(low[1...]))
        #expect(try await two.claim(session: fixture.session, for: "d2", upTo: 5, leaseFor: .seconds(60)).isEmpty)
        #expect(try await fixture.sql("SELECT string_agg(DISTINCT leaseOwner, ',' ORDER BY leaseOwner) FROM haul.download") == "d1,d2")
        #expect(try await one.claim(session: "no such session", for: "d1", upTo: 5, leaseFor: .seconds(60)).isEmpty)
    }

    /// The session's limits count every daemon's live leases; a host's downloads are counted
    /// together whatever the case of its name and the port; a full host does not block others.
    @Test func sessionAndHostLimitsCountEveryDaemon() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 4, maxDownloadsPerHost: 2))
        let hosts = [1: "A.example:8443", 2: "a.example", 3: "a.EXAMPLE", 4: "b.example", 5: "c.example", 6: "c.example"]
        let added = try await fixture.add(1...6, host: { hosts[$0]! })
        let one = try await fixture.daemon(), two = try await fixture.daemon(), three = try await fixture.daemon()

        let first = try await one.claim(session: fixture.session, for: "d1", upTo: 1, leaseFor: .seconds(60))
        #expect(first.map(\.host) == ["a.example"])
        let second = try await two.claim(session: fixture.session, for: "d2", upTo: 10, leaseFor: .seconds(60))
        #expect(ids(second) == [added[1], added[3], added[4]], "a.example's third waits; the session has 4 slots")
        #expect(try await three.claim(session: fixture.session, for: "d3", upTo: 10, leaseFor: .seconds(60)).isEmpty)
        let live = try await fixture.liveLeases()
        #expect(live.total == 4 && live.busiestHost == 2)
    }

    /// The host a per-host limit counts is the URL's, as the server derives it: lower case,
    /// without userinfo, port or IPv6 brackets.
    @Test func theServerDerivesEachDownloadsHost() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let hosts = [1: "User:pw@Mirror.EXAMPLE:8080", 2: "[::1]:8443", 3: "127.0.0.1", 4: "xn--bcher-kva.example"]
        try await fixture.add(1...4, host: { hosts[$0]! })
        #expect(try await fixture.sql("SELECT string_agg(host, ' ' ORDER BY position) FROM haul.download")
                == "mirror.example ::1 127.0.0.1 xn--bcher-kva.example")
    }

    /// With sequential groups, only the earliest group with anything queued or running is
    /// claimed (downloads without a group are never held back), whatever the positions say.
    @Test func sequentialGroupsAreClaimedOneAfterAnother() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 10, groupOrder: .sequential))
        let first = try await fixture.add(10...11, group: "first")
        let second = try await fixture.add(1...2, group: "second")
        let loose = try await fixture.add(5...5)
        let daemon = try await fixture.daemon()

        let claimed = try await daemon.claim(session: fixture.session, for: "d1", upTo: 10, leaseFor: .seconds(60))
        #expect(ids(claimed) == loose + first)
        for download in claimed {
            var row = try #require(try await daemon.load(download.lease.id))
            row.state = .completed
            try await daemon.submit([.saveProgress([row])], fencedBy: download.lease, releasing: true)
        }
        #expect(ids(try await daemon.claim(session: fixture.session, for: "d1", upTo: 10, leaseFor: .seconds(60))) == second)
    }

    /// A release frees the session's slot at once; the next claim gets a higher epoch and is
    /// no takeover; releasing a lease already given back does nothing.
    @Test func releaseFreesASlot() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 1))
        let added = try await fixture.add(1...2)
        let one = try await fixture.daemon(), two = try await fixture.daemon()

        let held = try await one.claim(session: fixture.session, for: "d1", upTo: 5, leaseFor: .seconds(60))
        #expect(ids(held) == [added[0]])
        #expect(try await two.claim(session: fixture.session, for: "d2", upTo: 5, leaseFor: .seconds(60)).isEmpty)
        #expect(try await one.release(held.map(\.lease)) == held.map(\.lease))
        #expect(try await one.release(held.map(\.lease)).isEmpty)

        let next = try await two.claim(session: fixture.session, for: "d2", upTo: 5, leaseFor: .seconds(60))
        #expect(ids(next) == [added[0]])
        #expect(next.first?.lease.epoch == 2)
        #expect(next.first?.isTakeover == false)
    }

    /// A renewal extends the leases still held, by the server's clock, and reports as lost an
    /// expired one (not revived, even if nobody took it yet) and one of an older epoch.
    @Test func renewalExtendsOnlyLeasesStillHeld() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 10))
        try await fixture.add(1...3)
        let daemon = try await fixture.daemon()
        let leases = try await daemon.claim(session: fixture.session, for: "d1", upTo: 3, leaseFor: .seconds(60)).map(\.lease)
        try #require(leases.count == 3)
        try await fixture.expire([leases[1].id])
        var older = leases[2]
        older.epoch -= 1

        let renewal = try await daemon.renew([leases[0], leases[1], older], for: .seconds(3600))
        #expect(renewal.renewed == [leases[0]])
        #expect(renewal.lost == [leases[1], older])
        let key = Int64(bitPattern: leases[0].id.rawValue)
        #expect(try await fixture.sql("SELECT leaseUntil > now() + interval '59 minutes' FROM haul.download WHERE id = \(key)") == "t")
    }

    /// A lease left to expire (a daemon that stopped renewing) is taken over by another daemon
    /// with a new epoch; the old owner's renewal reports it lost and its completion is refused,
    /// leaving the row as the new owner has it; the new owner's completion places it once.
    @Test func anExpiredLeaseIsTakenOverAndTheOldOwnerIsFenced() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 1))
        let added = try await fixture.add(1...1)
        let old = try await fixture.daemon(), new = try await fixture.daemon()

        let lost = try #require(try await old.claim(session: fixture.session, for: "old", upTo: 1, leaseFor: .seconds(60)).first?.lease)
        #expect(try await new.claim(session: fixture.session, for: "new", upTo: 1, leaseFor: .seconds(60)).isEmpty)
        // Its last renewal is a short one; then the server's clock decides when it ends.
        #expect(try await old.renew([lost], for: .milliseconds(300)).renewed == [lost])
        try await waitUntil("the lease to expire by the server's clock", within: .seconds(20)) {
            try await fixture.sql("SELECT leaseUntil < now() FROM haul.download") == "t"
        }
        let taken = try await new.claim(session: fixture.session, for: "new", upTo: 1, leaseFor: .seconds(60))
        #expect(ids(taken) == added)
        #expect(taken.first?.previousOwner == "old")
        #expect(taken.first?.lease.epoch == lost.epoch + 1)

        #expect(try await old.renew([lost], for: .seconds(60)).lost == [lost])
        var row = try #require(try await old.load(lost.id))
        row.state = .completed
        row.filePath = "/srv/downloads/by-the-old-owner.bin"
        let event = StoredEvent(kind: .completed, download: lost.id)
        let refused = await #expect(throws: HaulError.self) {
            try await old.submit([.saveProgress([row]), .appendEvents(session: fixture.session, [event])], fencedBy: lost, releasing: true)
        }
        #expect(refused?.code == .invalidState)
        #expect(refused?.message.contains("leased to new at epoch \(lost.epoch + 1)") == true, "\(refused?.message ?? "")")
        #expect(try await new.load(lost.id)?.state == .queued)
        #expect(try await new.events(session: fixture.session, after: 0, limit: 10).isEmpty)
        #expect(try await old.release([lost]).isEmpty)

        row.filePath = "/srv/downloads/by-the-new-owner.bin"
        let held = try #require(taken.first?.lease)
        try await new.submit([.saveProgress([row]), .appendEvents(session: fixture.session, [event])], fencedBy: held, releasing: true)
        #expect(try await new.load(lost.id)?.filePath == "/srv/downloads/by-the-new-owner.bin")
        #expect(try await new.events(session: fixture.session, after: 0, limit: 10).count == 1)
        #expect(try await fixture.sql("SELECT leaseOwner IS NULL AND leaseUntil IS NULL FROM haul.download") == "t")
        #expect(try await new.claim(session: fixture.session, for: "new", upTo: 1, leaseFor: .seconds(60)).isEmpty)
    }

    /// A refused fence skips its own writes only: the rest of the transaction (another
    /// caller's rows) commits. SQLite has no leases: there a fence always holds.
    @Test func aRefusedFenceSkipsOnlyItsOwnWrites() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let added = try await fixture.add(1...2)
        var first = try #require(try await fixture.store.load(added[0]))
        var second = try #require(try await fixture.store.load(added[1]))
        first.state = .completed
        second.state = .failed
        let stale = LeaseFence(lease: DownloadLease(id: added[0], owner: "nobody", epoch: 7), releasing: false)
        try await fixture.store.submit(.all([.fenced(stale, [.saveProgress([first])]), .saveProgress([second])]))
        #expect(stale.refused == LeaseFence.Refusal(owner: nil, epoch: 0))
        #expect(try await fixture.store.load(added[0])?.state == .queued)
        #expect(try await fixture.store.load(added[1])?.state == .failed)

        // The batch's events about the download whose fence was refused are not appended (its
        // new owner reports it); the others are, in order.
        let events = [
            StoredEvent(kind: .completed, download: added[0]), StoredEvent(kind: .failed, download: added[1]),
            StoredEvent(kind: .groupCompleted, group: "g"),
        ]
        let staleAgain = LeaseFence(lease: DownloadLease(id: added[0], owner: "nobody", epoch: 7), releasing: true)
        try await fixture.store.submit(.all([.fenced(staleAgain, [.saveProgress([first])]), .appendEvents(session: fixture.session, events)]))
        #expect(staleAgain.refused != nil)
        let appended = try await fixture.store.events(session: fixture.session, after: 0, limit: 10)
        #expect(appended.map(\.kind) == [.failed, .groupCompleted])
        #expect(appended.first?.download == added[1])

        let sqlite = try DownloadStore.open(directory: nil)
        try await sqlite.save([StoreTests.minimal(1)])
        var row = StoreTests.minimal(1)
        row.state = .completed
        try await sqlite.submit([.saveProgress([row])], fencedBy: DownloadLease(id: row.id, owner: "any", epoch: 1), releasing: true)
        #expect(try await sqlite.load(row.id)?.state == .completed)
    }
}
