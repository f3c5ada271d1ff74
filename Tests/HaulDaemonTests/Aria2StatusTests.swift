import Foundation
@testable import Haul
@testable import HaulDaemon
import Testing

/// The shapes aria2 clients read, without a manager: status structs, error codes, pages of
/// lists, queue moves and notifications.
@Suite struct Aria2StatusTests {
    func info(
        _ state: DownloadState, done: Int64 = 0, total: Int64? = nil, attempts: Int = 0, error: HaulError? = nil,
        fileName: String? = nil, placed: String? = nil
    ) -> DownloadInfo {
        var info = DownloadInfo(
            id: DownloadID(rawValue: 0xABC),
            request: DownloadRequest(url: URL(string: "http://h/file.bin")!, directory: URL(fileURLWithPath: "/srv/dl"), fileName: fileName),
            group: nil)
        info.state = state
        info.progress = TransferProgress(completedBytes: done, expectedBytes: total, bytesPerSecond: 1234.7)
        info.attempts = attempts
        info.error = error
        info.fileURL = placed.map { URL(fileURLWithPath: $0) }
        return info
    }

    /// A running download between attempts (its server gone) is `waiting`, with the reason.
    @Test func waitingToRetryShowsTheReason() {
        var between = info(.running, done: 5, total: 10, attempts: 3, error: HaulError(.connectionFailed, "h:80: connection refused"))
        between.isWaitingToRetry = true
        let entry = Aria2Status.entry(between, keys: nil)
        #expect(entry["status"] == "waiting")
        #expect(entry["errorMessage"] == "h:80: connection refused")
        #expect(entry["errorCode"] == "6")
        let running = Aria2Status.entry(info(.running, done: 5, total: 10, attempts: 1), keys: nil)
        #expect(running["status"] == "active")
        #expect(running["errorMessage"] == nil)
    }

    /// Haul's states map to aria2's six status words.
    @Test func statusWords() {
        let words = DownloadState.allCases.map(Aria2Status.name)
        #expect(words == ["waiting", "active", "paused", "complete", "error", "removed"])
    }

    /// A status struct has aria2's keys, every value a string, and one file with one URI.
    @Test func activeEntryShape() {
        let entry = Aria2Status.entry(info(.running, done: 3 << 19, total: 3 << 20, attempts: 1), keys: nil)
        #expect(entry == [
            "gid": "0000000000000abc", "status": "active", "totalLength": "3145728", "completedLength": "1572864",
            "uploadLength": "0", "downloadSpeed": "1234", "uploadSpeed": "0", "connections": "1",
            "pieceLength": "1048576", "numPieces": "3", "bitfield": "80", "dir": "/srv/dl",
            "files": [[
                "index": "1", "path": "/srv/dl/file.bin", "length": "3145728", "completedLength": "1572864", "selected": "true",
                "uris": [["uri": "http://h/file.bin", "status": "used"]],
            ]],
        ])
    }

    /// files[0].path without `out`: empty until the server answered (nothing known but the
    /// request), then the name the URL gives, made safe; for a download that ended unplaced,
    /// empty again.
    @Test func pathOnceTheServerAnswered() {
        #expect(Aria2Status.path(info(.running, attempts: 1)) == "")
        #expect(Aria2Status.path(info(.queued)) == "")
        #expect(Aria2Status.path(info(.running, done: 1, total: 10, attempts: 1)) == "/srv/dl/file.bin")
        #expect(Aria2Status.path(info(.paused, done: 1, total: 10, attempts: 1)) == "/srv/dl/file.bin")
        var hidden = info(.running, done: 1, total: 10, attempts: 1)
        hidden.request.url = URL(string: "http://h/dir/..%2F.secret%20name")!
        #expect(Aria2Status.path(hidden) == "/srv/dl/secret name")
        #expect(Aria2Status.path(info(.failed, done: 1, total: 10, attempts: 1)) == "")
    }

    /// With `keys`, only those keys are answered; unknown keys are ignored; empty means all.
    @Test func keysFilter() {
        let waiting = info(.queued)
        #expect(Aria2Status.entry(waiting, keys: ["gid", "status", "nonsense"]) == ["gid": "0000000000000abc", "status": "waiting"])
        #expect(Aria2Status.entry(waiting, keys: []) == Aria2Status.entry(waiting, keys: nil))
    }

    /// Stopped downloads carry aria2's errorCode and errorMessage; others do not. A waiting
    /// download has no bitfield, and its URI is still waiting.
    @Test func stoppedEntriesCarryErrorCodes() {
        let complete = Aria2Status.entry(info(.completed, done: 10, total: 10, attempts: 1, placed: "/srv/dl/file.bin"), keys: nil)
        #expect(complete["errorCode"] == "0")
        #expect(complete["errorMessage"] == "")
        #expect(complete["downloadSpeed"] == "0")
        #expect(complete["files"]?.arrayValue?.first?["path"] == "/srv/dl/file.bin")
        #expect(complete["bitfield"] == "80")
        let failed = Aria2Status.entry(info(.failed, attempts: 1, error: HaulError(.httpStatus, "404 Not Found", httpStatus: 404)), keys: nil)
        #expect(failed["status"] == "error")
        #expect(failed["errorCode"] == "3")
        #expect(failed["errorMessage"] == "404 Not Found")
        #expect(Aria2Status.entry(info(.canceled), keys: nil)["errorCode"] == "31")
        let waiting = Aria2Status.entry(info(.queued, fileName: "named.bin"), keys: nil)
        #expect(waiting["errorCode"] == nil)
        #expect(waiting["bitfield"] == nil)
        #expect(waiting["files"]?.arrayValue?.first?["path"] == "/srv/dl/named.bin")
        #expect(waiting["files"]?.arrayValue?.first?["uris"] == [["uri": "http://h/file.bin", "status": "waiting"]])
    }

    /// One bit per piece, highest first, for the pieces fully done.
    @Test func bitfields() {
        let mib: Int64 = 1 << 20
        #expect(Aria2Status.bitfield(total: 3 * mib, done: 2 * mib + 5, started: true) == "c0")
        #expect(Aria2Status.bitfield(total: 3 * mib - 1, done: 3 * mib - 1, started: true) == "e0")
        #expect(Aria2Status.bitfield(total: 9 * mib, done: 9 * mib, started: true) == "ff80")
        #expect(Aria2Status.bitfield(total: 9 * mib, done: 0, started: true) == "0000")
        #expect(Aria2Status.bitfield(total: 9 * mib, done: 0, started: false) == nil)
        #expect(Aria2Status.bitfield(total: 0, done: 0, started: true) == nil)
    }

    /// Haul's error codes map to aria2's exit status numbers.
    @Test func errorCodes() {
        let cases: [(HaulError, Int)] = [
            (HaulError(.timeout, ""), 2), (HaulError(.httpStatus, "", httpStatus: 404), 3),
            (HaulError(.httpStatus, "", httpStatus: 410), 3), (HaulError(.connectionFailed, ""), 6),
            (HaulError(.diskFull, ""), 9), (HaulError(.fileExists, ""), 13), (HaulError(.fileSystem, ""), 17),
            (HaulError(.httpStatus, "", httpStatus: 500), 22), (HaulError(.tooManyRedirects, ""), 23),
            (HaulError(.redirectLoop, ""), 23), (HaulError(.httpStatus, "", httpStatus: 401), 24),
            (HaulError(.httpStatus, "", httpStatus: 503), 29), (HaulError(.checksumMismatch, ""), 32),
            (HaulError(.invalidState, ""), 1),
        ]
        for (error, code) in cases { #expect(Aria2ErrorCode.code(for: error) == code, "\(error)") }
    }

    /// Pages follow aria2's manual: with A, B, C, (0, 1) is A, (1, 2) is B, C and (-1, 2) is C, B.
    @Test func pagination() {
        #expect(Aria2Pagination.page(count: 3, offset: 0, num: 1) == [0])
        #expect(Aria2Pagination.page(count: 3, offset: 1, num: 2) == [1, 2])
        #expect(Aria2Pagination.page(count: 3, offset: -1, num: 2) == [2, 1])
        #expect(Aria2Pagination.page(count: 3, offset: -3, num: 5) == [0])
        #expect(Aria2Pagination.page(count: 3, offset: 0, num: 1000) == [0, 1, 2])
        #expect(Aria2Pagination.page(count: 3, offset: 3, num: 1) == [])
        #expect(Aria2Pagination.page(count: 3, offset: -4, num: 1) == [])
        #expect(Aria2Pagination.page(count: 3, offset: 0, num: 0) == [])
        #expect(Aria2Pagination.page(count: 3, offset: Int.min, num: Int.max) == [])
        #expect(Aria2Pagination.page(count: 3, offset: Int.max, num: Int.max) == [])
        #expect(Aria2Pagination.page(count: 0, offset: -1, num: 1) == [])
    }

    /// Queue moves count from the front, the current place or the end, and stop at either end.
    @Test func queueMoves() throws {
        #expect(try Aria2QueueMove.target(current: 3, count: 5, pos: 0, how: "POS_SET") == 0)
        #expect(try Aria2QueueMove.target(current: 3, count: 5, pos: -1, how: "POS_CUR") == 2)
        #expect(try Aria2QueueMove.target(current: 3, count: 5, pos: 10, how: "POS_CUR") == 4)
        #expect(try Aria2QueueMove.target(current: 1, count: 5, pos: 0, how: "POS_END") == 4)
        #expect(try Aria2QueueMove.target(current: 1, count: 5, pos: -2, how: "POS_END") == 2)
        #expect(try Aria2QueueMove.target(current: 1, count: 5, pos: -9, how: "POS_SET") == 0)
        #expect(try Aria2QueueMove.target(current: 1, count: 5, pos: Int.min, how: "POS_CUR") == 0)
        #expect(throws: JSONRPCError.self) { try Aria2QueueMove.target(current: 0, count: 1, pos: 0, how: "POS_BAD") }
    }

    /// Events become aria2's notifications; a download that retries is announced as started once.
    @Test func notificationsForEvents() {
        let id = DownloadID(rawValue: 0xABC)
        let url = URL(string: "http://h/f")!
        var order = Aria2EventOrder()
        func names(_ event: ManagerEvent) -> [String] { order.notifications(for: event).map(\.0) }
        #expect(names(.queued(id)) == [])
        #expect(names(.started(id, resumedFrom: 0, finalURL: url)) == ["aria2.onDownloadStart"])
        #expect(names(.retrying(id, attempt: 2, delay: .zero, error: HaulError(.timeout, ""))) == [])
        #expect(names(.started(id, resumedFrom: 10, finalURL: url)) == [])
        #expect(names(.paused(id, reason: nil)) == ["aria2.onDownloadPause"])
        #expect(names(.started(id, resumedFrom: 10, finalURL: url)) == ["aria2.onDownloadStart"])
        #expect(names(.completed(info(.completed))) == ["aria2.onDownloadComplete"])
        #expect(order.running.isEmpty && order.announced.isEmpty)
        #expect(names(.progress(id, TransferProgress())) == [])
        #expect(Aria2Notifications.message("aria2.onDownloadStart", id)
            == ["jsonrpc": "2.0", "method": "aria2.onDownloadStart", "params": [["gid": "0000000000000abc"]]])
    }

    /// aria2's order for downloads that never ran: a failure (404) or completion still starts
    /// with onDownloadStart; a paused add, a pause or a removal of one sends nothing; a
    /// download paused after starting is stopped with onDownloadStop.
    @Test func notificationsOfDownloadsThatNeverRan() {
        let id = DownloadID(rawValue: 0xABC)
        let url = URL(string: "http://h/f")!
        var order = Aria2EventOrder()
        func names(_ event: ManagerEvent) -> [String] { order.notifications(for: event).map(\.0) }
        #expect(names(.failed(info(.failed))) == ["aria2.onDownloadStart", "aria2.onDownloadError"])
        #expect(names(.completed(info(.completed))) == ["aria2.onDownloadStart", "aria2.onDownloadComplete"])
        #expect(names(.queued(id)) == [])
        #expect(names(.paused(id, reason: nil)) == [])
        #expect(names(.canceled(id, group: nil)) == [])
        #expect(names(.started(id, resumedFrom: 0, finalURL: url)) == ["aria2.onDownloadStart"])
        #expect(names(.paused(id, reason: nil)) == ["aria2.onDownloadPause"])
        #expect(names(.canceled(id, group: nil)) == ["aria2.onDownloadStop"])
        #expect(order.running.isEmpty && order.announced.isEmpty)
    }

    /// A download is announced when it becomes active, before its server answers: its later
    /// `started` adds nothing, and a pause or removal before that answer is reported.
    @Test func notificationsFromActivation() {
        let id = DownloadID(rawValue: 0xABC)
        let url = URL(string: "http://h/f")!
        var order = Aria2EventOrder()
        func names(_ event: ManagerEvent) -> [String] { order.notifications(for: event).map(\.0) }
        #expect(names(.activated(id)) == ["aria2.onDownloadStart"])
        #expect(names(.started(id, resumedFrom: 0, finalURL: url)) == [])
        #expect(names(.activated(id)) == [], "a retry in the same run")
        #expect(names(.paused(id, reason: nil)) == ["aria2.onDownloadPause"])
        #expect(names(.activated(id)) == ["aria2.onDownloadStart"], "resumed")
        #expect(names(.canceled(id, group: nil)) == ["aria2.onDownloadStop"])
        #expect(names(.activated(id)) == ["aria2.onDownloadStart"])
        #expect(names(.failed(info(.failed))) == ["aria2.onDownloadError"])
        #expect(order.running.isEmpty && order.announced.isEmpty)
    }
}
