@testable import Haul
import Testing

/// A daemon's own view of its leases: local deadlines, renewals, losses, without I/O.
@Suite("Lease book")
struct LeaseBookTests {
    private let start = ContinuousClock.now

    private func claim(_ n: UInt64, epoch: Int64 = 1) -> ClaimedDownload {
        ClaimedDownload(lease: DownloadLease(id: DownloadID(rawValue: n), owner: "d1", epoch: epoch), host: "h", previousOwner: nil)
    }

    /// A lease is trusted until the instant its claim was sent plus its duration minus the
    /// margin, and no longer: then its transfer must stop.
    @Test func aLeaseExpiresLocallyBeforeTheServerCouldExpireIt() {
        var book = LeaseBook(duration: .seconds(30))
        #expect(book.renewalInterval == .seconds(10))
        book.claimed([claim(1), claim(2)], sentAt: start)
        #expect(book.nextDeadline == start + .seconds(27))
        #expect(book.expire(now: start + .seconds(26)).isEmpty)
        let stops = book.expire(now: start + .seconds(27))
        #expect(stops.map(\.lease.id.rawValue) == [1, 2])
        #expect(stops.allSatisfy { $0.reason == .expiredLocally })
        #expect(book.count == 0 && book.lease(of: DownloadID(rawValue: 1)) == nil)
    }

    /// A renewal moves the deadline of the leases it renewed, counted from when it was sent;
    /// the leases it lost stop at once.
    @Test func aRenewalExtendsWhatItRenewedAndStopsWhatWasLost() {
        var book = LeaseBook(duration: .seconds(30))
        book.claimed([claim(1), claim(2)], sentAt: start)
        let renewal = LeaseRenewal(renewed: [claim(1).lease], lost: [claim(2).lease])
        let stops = book.renewed(renewal, sentAt: start + .seconds(10))
        #expect(stops == [LeaseBook.Stop(lease: claim(2).lease, reason: .lost)])
        #expect(book.leases == [claim(1).lease])
        #expect(book.nextDeadline == start + .seconds(37))
        #expect(book.expire(now: start + .seconds(30)).isEmpty)
    }

    /// An answer about a lease released meanwhile, or about an older epoch of a download
    /// claimed again, changes nothing.
    @Test func lateAnswersAboutOtherLeasesChangeNothing() {
        var book = LeaseBook(duration: .seconds(30))
        book.claimed([claim(1), claim(2, epoch: 3)], sentAt: start)
        book.released(DownloadID(rawValue: 1))
        let stale = LeaseRenewal(renewed: [claim(1).lease], lost: [claim(2, epoch: 2).lease])
        #expect(book.renewed(stale, sentAt: start + .seconds(20)).isEmpty)
        #expect(book.leases == [claim(2, epoch: 3).lease])
        #expect(book.nextDeadline == start + .seconds(27))
    }
}
