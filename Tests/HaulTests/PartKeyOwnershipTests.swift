import Foundation
@testable import Haul
import Testing

/// Who writes which part file, without a manager.
@Suite("Part key ownership")
struct PartKeyOwnershipTests {
    let request = DownloadRequest(url: URL(string: "http://example.com/a.bin")!, directory: URL(fileURLWithPath: "/tmp"))
    let first = DownloadID(rawValue: 1)
    let second = DownloadID(rawValue: 2)

    /// The first download of a request takes the request's key; a second, while the first is
    /// unfinished, takes a key of its own; once the first is done the key is free again.
    @Test func secondDownloadOfARequestTakesItsOwnKey() {
        var keys = PartKeyOwnership()
        let shared = keys.newKey(for: request, id: first)
        #expect(shared == PartKey(for: request))
        let own = keys.newKey(for: request, id: second)
        #expect(own == shared.owned(by: second))
        #expect(keys.owns(shared, id: first))
        #expect(!keys.owns(shared, id: second))
        #expect(keys.owns(own, id: second))
        keys.release(shared, by: first)
        #expect(keys.newKey(for: request, id: DownloadID(rawValue: 3)) == shared)
    }

    /// A finished download run again gets its key back when it is free, and a key of its own
    /// (its bytes start over) when a newer download holds it.
    @Test func reclaimGivesTheKeyBackOrAnOwnOne() {
        var keys = PartKeyOwnership()
        let shared = keys.newKey(for: request, id: first)
        keys.release(shared, by: first)
        #expect(keys.reclaim(shared, by: first) == nil)
        #expect(keys.owns(shared, id: first))
        keys.release(shared, by: first)
        _ = keys.newKey(for: request, id: second)
        #expect(keys.reclaim(shared, by: first) == shared.owned(by: first))
        // Releasing a key one does not hold changes nothing.
        keys.release(shared, by: first)
        #expect(keys.owns(shared, id: second))
    }

    /// A stored download holds its key again after a restart; an own key is never shared.
    @Test func restoredKeysAreHeld() {
        var keys = PartKeyOwnership()
        let shared = PartKey(for: request)
        keys.hold(shared, by: first)
        #expect(keys.newKey(for: request, id: second) == shared.owned(by: second))
        let own = shared.owned(by: second)
        keys.hold(own, by: second)
        #expect(keys.owns(shared, id: first))
    }
}
