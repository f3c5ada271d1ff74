import Foundation
import Testing

@testable import Haul

/// A batch's IDs: made from one seed, handed out in increasing order, shaped as
/// `DownloadID.random()` shapes them.
@Suite struct DownloadIDBatchTests {
    @Test func idsIncreaseAndKeepTheMinutePrefix() {
        let now = Date()
        var batch = DownloadIDBatch(count: 5_000, now: now)
        let ids = (0..<5_000).map { _ in batch.next() }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        // The top 24 bits are the minute, as for an ID made alone at the same moment.
        let single = DownloadID.random(now: now)
        #expect(Set(ids.map { $0.rawValue >> 40 }) == [single.rawValue >> 40])
        // 40 random bits: a batch of 5,000 spans most of the minute's range.
        let spread = ids.last!.rawValue - ids.first!.rawValue
        #expect(spread > (1 << 39))
    }

    @Test func twoBatchesShareNoSequence() {
        var first = DownloadIDBatch(count: 100)
        var second = DownloadIDBatch(count: 100)
        let a = (0..<100).map { _ in first.next() }
        let b = (0..<100).map { _ in second.next() }
        #expect(Set(a).isDisjoint(with: b))
    }

    @Test func moreDownloadsThanCountedStillGetIDs() {
        var batch = DownloadIDBatch(count: 2)
        let ids = (0..<5).map { _ in batch.next() }
        #expect(Set(ids).count == 5)
    }
}
