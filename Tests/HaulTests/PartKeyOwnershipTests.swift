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

    /// The key is the first 8 bytes of SHA-256 over "URL\nfile name", as every earlier version
    /// made it: a part file left by one is found by the next (values from Python's hashlib).
    @Test func keyIsStableAcrossVersions() {
        #expect(PartKey(for: request).description == "b4bda50d41cb1120")
        var named = request
        named.fileName = "\u{FC} name.bin"
        #expect(PartKey(for: named).description == "cdb8103d6333c358")
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

/// Group membership and completion counts, without a manager.
@Suite("Group book")
struct GroupBookTests {
    func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value) }

    /// Groups get ordinals in creation order; a group completes when its last unfinished
    /// member finishes, and reopens when a member runs again.
    @Test func completionFollowsTheUnfinishedCount() {
        var book = GroupBook()
        book.create("a")
        book.add(id(1), to: "b")
        book.add(id(2), to: "b")
        book.add(id(3), to: "b", finished: true)
        #expect(book["a"]?.ordinal == 0)
        #expect(book["b"]?.ordinal == 1)
        #expect(book["b"]?.members == [id(1), id(2), id(3)])
        let first = book.memberFinished(in: "b")
        #expect(first == false)
        let last = book.memberFinished(in: "b")
        #expect(last == true)
        book.memberReopened(in: "b")
        #expect(book["b"]?.unfinished == 1)
    }

    /// Moving a member keeps both counts right; removing one deletes its group only when
    /// asked and the group is empty.
    @Test func moveAndRemove() {
        var book = GroupBook()
        book.add(id(1), to: "old")
        book.add(id(2), to: "old", finished: true)
        book.move(id(1), from: "old", to: "new", finished: false)
        #expect(book["old"]?.members == [id(2)])
        #expect(book["old"]?.unfinished == 0)
        #expect(book["new"]?.unfinished == 1)
        let kept = book.remove([id(2)], from: "old", unfinished: 0)
        #expect(!kept)
        #expect(book["old"] != nil)
        book.add(id(3), to: "old", finished: true)
        let deleted = book.remove([id(3)], from: "old", unfinished: 0, deletingIfEmpty: true)
        #expect(deleted)
        #expect(book["old"] == nil)
        // A group created later still gets a new ordinal.
        book.create("later")
        #expect(book["later"]?.ordinal == 2)
    }

    /// Members moved together from several groups (a re-run taking earlier downloads into its
    /// group) leave each old group with the members and unfinished count it should keep, and
    /// join the new group in order.
    @Test func moveMany() {
        var book = GroupBook()
        book.add(id(1), to: "a")
        book.add(id(2), to: "a", finished: true)
        book.add(id(3), to: "a", finished: true)
        book.add(id(4), to: "b")
        book.move([(id(2), "a", true), (id(1), "a", false), (id(4), "b", false), (id(5), nil, true)], to: "new")
        #expect(book["a"]?.members == [id(3)])
        #expect(book["a"]?.unfinished == 0)
        #expect(book["b"]?.members == [])
        #expect(book["b"]?.unfinished == 0)
        #expect(book["new"]?.members == [id(2), id(1), id(4), id(5)])
        #expect(book["new"]?.unfinished == 2)
    }
}

/// New download IDs: unique, and increasing from one minute to the next (so the store's index
/// of IDs grows at its end).
@Suite("Download IDs")
struct DownloadIDTests {
    @Test func idsIncreaseByMinuteAndDoNotRepeat() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let ids = (0..<10_000).map { _ in DownloadID.random(now: now) }
        #expect(Set(ids).count == ids.count)
        let later = DownloadID.random(now: now.addingTimeInterval(60))
        #expect(ids.allSatisfy { $0 < later })
        #expect(ids.allSatisfy { Int64(bitPattern: $0.rawValue) > 0 }, "stored as positive integers")
        #expect(DownloadID(later.description) == later)
    }
}
