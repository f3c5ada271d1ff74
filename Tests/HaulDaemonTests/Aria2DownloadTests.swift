import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// aria2's methods end to end: real JSON through the handler, a real manager downloading from
/// the in-process test server, notifications through a recording sink.
@Suite(.timeLimit(.minutes(3))) struct Aria2DownloadTests {
    /// Every leaf of an answer is a string, as aria2's interface promises.
    func allStrings(_ value: JSONValue) -> Bool {
        switch value {
        case .string: return true
        case .array(let elements): return elements.allSatisfy(allStrings)
        case .object(let members): return members.values.allSatisfy(allStrings)
        default: return false
        }
    }

    /// addUri → tellStatus → complete: the GID, the status struct, the lists, the totals, the
    /// notifications and the file all say the same.
    @Test func addUriCompletes() async throws {
        try await Aria2Fixture.run { f in
            let gid = try await f.add(f.url("a.bin", size: 5000, seed: 3))
            #expect(gid.count == 16 && gid.allSatisfy(\.isHexDigit))
            try await f.finished(gid)
            let status = try await f.status(gid)
            #expect(allStrings(status))
            #expect(status["status"] == "complete")
            #expect(status["totalLength"] == "5000")
            #expect(status["completedLength"] == "5000")
            #expect(status["errorCode"] == "0")
            #expect(status["dir"] == .string(f.directory.path))
            let path = f.directory.appendingPathComponent("a.bin").path
            #expect(status["files"] == [[
                "index": "1", "path": .string(path), "length": "5000", "completedLength": "5000", "selected": "true",
                "uris": [["uri": .string(f.url("a.bin", size: 5000, seed: 3)), "status": "used"]],
            ]])
            #expect(FileManager.default.contents(atPath: path) == Data(TestContent.bytes(seed: 3, size: 5000)))
            #expect(try await f.client.result("aria2.getFiles", [.string(gid)]) == status["files"])
            #expect(try await f.client.result("aria2.getUris", [.string(gid)]) == status["files"]?.arrayValue?.first?["uris"])
            #expect(try await f.client.result("aria2.tellStatus", [.string(gid), ["gid", "status"]]) == ["gid": .string(gid), "status": "complete"])
            #expect(Aria2Fixture.gids(try await f.client.result("aria2.tellStopped", [0, 10])) == [gid])
            #expect(try await f.client.result("aria2.tellActive") == [])
            #expect(try await f.client.result("aria2.tellWaiting", [0, 10]) == [])
            #expect(try await f.client.result("aria2.getGlobalStat") == [
                "downloadSpeed": "0", "uploadSpeed": "0", "numActive": "0", "numWaiting": "0", "numStopped": "1", "numStoppedTotal": "1",
            ])
            try await f.sink.waitFor("aria2.onDownloadComplete", gid: gid)
            #expect(f.sink.received.filter { $0.gid == gid }.map(\.method) == ["aria2.onDownloadStart", "aria2.onDownloadComplete"])
        }
    }

    /// A paused download is listed as paused and keeps its bytes; unpaused, it completes with
    /// the right content. Pausing or unpausing twice is refused as aria2 refuses it.
    @Test func pauseAndUnpause() async throws {
        try await Aria2Fixture.run { f in
            let url = f.url("slow.bin", size: 300_000, seed: 5, rate: 150_000)
            let gid = try await f.add(url)
            try await f.sink.waitFor("aria2.onDownloadStart", gid: gid)
            #expect(try await f.client.result("aria2.pause", [.string(gid)]) == .string(gid))
            try await f.sink.waitFor("aria2.onDownloadPause", gid: gid)
            #expect(try await f.status(gid, ["status"]) == ["status": "paused"])
            #expect(try await f.client.error("aria2.pause", [.string(gid)]).message == "GID#\(gid) cannot be paused now")
            let waiting = try await f.client.result("aria2.tellWaiting", [0, 10, ["gid", "status"]])
            #expect(waiting == [["gid": .string(gid), "status": "paused"]])
            #expect(try await f.client.result("aria2.tellActive") == [])
            #expect(try await f.client.result("aria2.getGlobalStat")["numWaiting"] == "1")
            #expect(try await f.client.result("aria2.unpause", [.string(gid)]) == .string(gid))
            #expect(try await f.client.error("aria2.unpause", [.string(gid)]).message == "GID#\(gid) cannot be unpaused now")
            try await f.finished(gid)
            #expect(try await f.status(gid, ["status"]) == ["status": "complete"])
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("slow.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 5, size: 300_000)))
        }
    }

    /// remove stops a download, deletes its part file and leaves a `removed` result until
    /// removeDownloadResult forgets it.
    @Test func removeAndForget() async throws {
        try await Aria2Fixture.run { f in
            let gid = try await f.add(f.url("big.bin", size: 2_000_000, rate: 100_000))
            try await f.sink.waitFor("aria2.onDownloadStart", gid: gid)
            #expect(try await f.client.result("aria2.remove", [.string(gid)]) == .string(gid))
            try await f.sink.waitFor("aria2.onDownloadStop", gid: gid)
            #expect(try await f.status(gid, ["status", "errorCode"]) == ["status": "removed", "errorCode": "31"])
            #expect(f.listing == [])
            #expect(try await f.client.error("aria2.remove", [.string(gid)]).message == "Active Download not found for GID#\(gid)")
            #expect(try await f.client.result("aria2.removeDownloadResult", [.string(gid)]) == "OK")
            #expect(try await f.client.error("aria2.tellStatus", [.string(gid)]).message == "GID \(gid) is not found")
            // forceRemove on a waiting download, and removeDownloadResult refused while it is not finished.
            let waiting = try await f.add(f.url("w.bin"), ["pause": "true"])
            #expect(try await f.client.error("aria2.removeDownloadResult", [.string(waiting)]).message
                == "Could not remove download result of GID#\(waiting)")
            #expect(try await f.client.result("aria2.forceRemove", [.string(waiting)]) == .string(waiting))
            #expect(try await f.status(waiting, ["status"]) == ["status": "removed"])
            #expect(try await f.client.result("aria2.purgeDownloadResult") == "OK")
            #expect(await f.manager.downloads().isEmpty)
        }
    }

    /// A download is announced when it becomes active, as aria2 does, not when the server
    /// first answers: a client that saw it `active` and removes it before any answer gets
    /// onDownloadStart, then onDownloadStop. (Before, the remove of a download whose server had
    /// not answered yet sent nothing, and aria2p's wait for the stop hung.)
    @Test func removingAnActiveDownloadBeforeTheServerAnswersSendsStartAndStop() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        try await Aria2Fixture.run { f in
            let gid = try await f.add("http://127.0.0.1:\(silent.port)/never.bin")
            try await waitUntil("the download is active") {
                try await f.status(gid, ["status"]) == ["status": "active"]
            }
            try await f.sink.waitFor("aria2.onDownloadStart", gid: gid)
            #expect(try await f.client.result("aria2.remove", [.string(gid)]) == .string(gid))
            try await f.sink.waitFor("aria2.onDownloadStop", gid: gid)
            #expect(f.sink.received.filter { $0.gid == gid }.map(\.method) == ["aria2.onDownloadStart", "aria2.onDownloadStop"])
        }
    }

    /// tellWaiting lists the one waiting queue in order, paused downloads at their places;
    /// changePosition moves queued and paused ones by aria2's rules; addUri's position inserts,
    /// paused or not; and the downloads really start in that order once a slot frees.
    @Test func queueOrderAndChangePosition() async throws {
        try await Aria2Fixture.run(maxConcurrent: 1) { f in
            let blocker = try await f.add(f.url("blocker.bin", size: 2_000_000, rate: 100_000))
            try await f.sink.waitFor("aria2.onDownloadStart", gid: blocker)
            var gids: [String: String] = [:]
            for (seed, name) in ["a", "b", "c"].enumerated() { gids[name] = try await f.add(f.url("\(name).bin", seed: seed)) }
            let (a, b, c) = (gids["a"]!, gids["b"]!, gids["c"]!)
            func waiting() async throws -> [String] {
                Aria2Fixture.gids(try await f.client.result("aria2.tellWaiting", [0, 100, ["gid"]]))
            }
            func move(_ gid: String, _ pos: Int, _ how: String) async throws -> JSONValue {
                try await f.client.result("aria2.changePosition", [.string(gid), .integer(Int64(pos)), .string(how)])
            }
            #expect(try await waiting() == [a, b, c])
            #expect(try await move(c, 0, "POS_SET") == 0)
            #expect(try await waiting() == [c, a, b])
            #expect(try await move(a, 1, "POS_CUR") == 2)
            #expect(try await waiting() == [c, b, a])
            #expect(try await move(c, 0, "POS_END") == 2)
            #expect(try await waiting() == [b, a, c])
            #expect(try await move(b, -5, "POS_CUR") == 0)
            #expect(Aria2Fixture.gids(try await f.client.result("aria2.tellWaiting", [-1, 2])) == [c, a])
            let d = try await f.add(f.url("d.bin"), position: 1)
            #expect(try await waiting() == [b, d, a, c])
            // A paused download keeps its place in the one waiting queue and moves in it.
            #expect(try await f.client.result("aria2.pause", [.string(a)]) == .string(a))
            #expect(try await waiting() == [b, d, a, c])
            #expect(try await f.status(a, ["status"]) == ["status": "paused"])
            #expect(try await move(a, -1, "POS_CUR") == 1)
            #expect(try await waiting() == [b, a, d, c])
            #expect(try await f.status(a, ["status"]) == ["status": "paused"])
            let e = try await f.add(f.url("e.bin", seed: 5), ["pause": "true"], position: 0)
            #expect(try await waiting() == [e, b, a, d, c])
            #expect(try await move(e, 0, "POS_END") == 4)
            #expect(Aria2Fixture.gids(try await f.client.result("aria2.tellWaiting", [1, 2])) == [a, d])
            #expect(try await f.client.error("aria2.changePosition", [.string(blocker), 0, "POS_SET"]).message
                == "GID#\(blocker) not found in the waiting queue.")
            #expect(try await f.client.error("aria2.changePosition", [.string(b), 0, "POS_NOWHERE"]).message.hasPrefix("Illegal argument"))
            #expect(try await f.client.result("aria2.unpause", [.string(a)]) == .string(a))
            #expect(try await waiting() == [b, a, d, c, e])
            #expect(try await f.client.result("aria2.remove", [.string(blocker)]) == .string(blocker))
            // The notifications, not the manager: the start of the last one must have been sent.
            for gid in [b, a, d, c] { try await f.sink.waitFor("aria2.onDownloadComplete", gid: gid) }
            let starts = f.sink.received.filter { $0.method == "aria2.onDownloadStart" && $0.gid != blocker }.map(\.gid)
            #expect(starts == [b, a, d, c])
            #expect(try await f.status(e, ["status"]) == ["status": "paused"])
        }
    }

    /// A failed download is an `error` with aria2's code and the reason; purging forgets the
    /// finished ones.
    @Test func errorsAndPurge() async throws {
        try await Aria2Fixture.run { f in
            let good = try await f.add(f.url("ok.bin"))
            let missing = try await f.add(f.url("missing.bin", extra: ["status": "404"]))
            try await f.sink.waitFor("aria2.onDownloadError", gid: missing)
            try await f.finished(good)
            // aria2's order: the 404 download is announced as started, then as failed.
            let events = f.sink.received.filter { $0.gid == missing }.map(\.method)
            #expect(events == ["aria2.onDownloadStart", "aria2.onDownloadError"])
            // A paused add, removed before it ever ran, sends nothing at all.
            let idle = try await f.add(f.url("idle.bin"), ["pause": "true"])
            #expect(try await f.client.result("aria2.remove", [.string(idle)]) == .string(idle))
            // Events are forwarded in order, so once a later download's completion is in,
            // anything about the removed one would be too.
            let later = try await f.add(f.url("later.bin"))
            try await f.sink.waitFor("aria2.onDownloadComplete", gid: later)
            #expect(f.sink.received.filter { $0.gid == idle } == [])
            let status = try await f.status(missing, ["status", "errorCode", "errorMessage"])
            #expect(status["status"] == "error")
            #expect(status["errorCode"] == "3")
            #expect(status["errorMessage"]?.stringValue?.contains("404") == true)
            #expect(Set(Aria2Fixture.gids(try await f.client.result("aria2.tellStopped", [0, 10]))) == [good, missing, idle, later])
            #expect(try await f.client.result("aria2.purgeDownloadResult") == "OK")
            #expect(try await f.client.result("aria2.tellStopped", [0, 10]) == [])
            #expect(try await f.client.result("aria2.getGlobalStat")["numStopped"] == "0")
            #expect(FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("ok.bin").path))
        }
    }

    /// pauseAll pauses queued and running downloads alike; unpauseAll queues them again.
    @Test func pauseAllAndUnpauseAll() async throws {
        try await Aria2Fixture.run(maxConcurrent: 2) { f in
            var gids: [String] = []
            for n in 0..<3 { gids.append(try await f.add(f.url("s\(n).bin", size: 2_000_000, seed: n, rate: 100_000))) }
            for gid in gids.prefix(2) { try await f.sink.waitFor("aria2.onDownloadStart", gid: gid) }
            #expect(try await f.client.result("aria2.forcePauseAll") == "OK")
            #expect(try await f.client.result("aria2.tellActive") == [])
            let paused = try await f.client.result("aria2.tellWaiting", [0, 10, ["gid", "status"]])
            #expect(paused == .array(gids.map { ["gid": .string($0), "status": "paused"] }))
            let startsBefore = f.sink.received.filter { $0.method == "aria2.onDownloadStart" }.count
            #expect(try await f.client.result("aria2.unpauseAll") == "OK")
            let statuses = try await f.client.result("aria2.tellStatus", [.string(gids[2]), ["status"]])
            #expect(statuses["status"] == "waiting" || statuses["status"] == "active")
            #expect(await f.manager.stateCounts().paused == 0)
            // Both slots' transfers are under way again (and no connection is still opening
            // when the fixture stops the test server).
            try await f.sink.waitUntil("two downloads to start again") { received in
                received.filter { $0.method == "aria2.onDownloadStart" }.count >= startsBefore + 2
            }
            #expect(try await f.client.result("aria2.pauseAll") == "OK")
            #expect(await f.manager.stateCounts().paused == 3)
        }
    }

    /// A download added paused can have its options changed before it runs; they apply when it does.
    @Test func changeOptionBeforeItRuns() async throws {
        try await Aria2Fixture.run { f in
            let gid = try await f.add(f.url("orig.bin", size: 3000, seed: 9, extra: ["key": "opts"]), ["pause": "true"])
            #expect(try await f.status(gid, ["status"]) == ["status": "paused"])
            let before = try await f.client.result("aria2.getOption", [.string(gid)])
            #expect(before["out"] == nil)
            #expect(before["split"] == "5", "aria2's default split, listed as aria2 lists it")
            let change: JSONValue = ["out": "renamed.bin", "max-download-limit": "100K", "header": ["X-Test: 1"]]
            #expect(try await f.client.result("aria2.changeOption", [.string(gid), change]) == "OK")
            let after = try await f.client.result("aria2.getOption", [.string(gid)])
            #expect(after["out"] == "renamed.bin")
            #expect(after["max-download-limit"] == "102400")
            #expect(after["header"] == "X-Test: 1")
            let escape = try await f.client.error("aria2.changeOption", [.string(gid), ["dir": "../"]])
            #expect(escape.message.contains("outside the download directory"))
            #expect(try await f.client.result("aria2.getOption", [.string(gid)]) == after)
            #expect(try await f.client.result("aria2.unpause", [.string(gid)]) == .string(gid))
            try await f.finished(gid)
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("renamed.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 9, size: 3000)))
            #expect(f.server.requests(forKey: "opts").last?.header("X-Test") == "1")
            #expect(try await f.client.error("aria2.changeOption", [.string(gid), ["out": "x.bin"]]).message
                == "Cannot change option for GID#\(gid)")
        }
    }

    /// changeUri replaces a waiting download's URI; leaving none is refused.
    @Test func changeUriReplaces() async throws {
        try await Aria2Fixture.run { f in
            let old = f.url("old.bin", size: 1500, seed: 1)
            let new = f.url("new.bin", size: 1500, seed: 2)
            let gid = try await f.add(old, ["pause": "true", "out": "file.bin"])
            #expect(try await f.client.error("aria2.changeUri", [.string(gid), 1, [.string(old)], []]).message.contains("would leave none"))
            #expect(try await f.client.error("aria2.changeUri", [.string(gid), 2, [], []]).message == "fileIndex is out of range")
            #expect(try await f.client.result("aria2.changeUri", [.string(gid), 1, [.string(old)], [.string(new)]]) == [1, 1])
            #expect(try await f.client.result("aria2.getUris", [.string(gid)]) == [["uri": .string(new), "status": "waiting"]])
            #expect(try await f.client.result("aria2.unpause", [.string(gid)]) == .string(gid))
            try await f.finished(gid)
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("file.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 2, size: 1500)))
        }
    }

    /// Global options change at run time: the concurrency limit in the manager, the default
    /// directory (inside the download directory only), the limits kept for later.
    @Test func globalOptions() async throws {
        try await Aria2Fixture.run { f in
            let initial = try await f.client.result("aria2.getGlobalOption")
            #expect(initial["dir"] == .string(f.directory.path))
            #expect(initial["max-concurrent-downloads"] == "4")
            // The daemon-wide settings aria2 also has, in aria2's forms.
            let configuration = f.manager.configuration
            #expect(initial["min-split-size"] == .string(String(configuration.minSegmentSize)))
            #expect(initial["timeout"] == .string(String(configuration.readTimeout.components.seconds)))
            #expect(initial["connect-timeout"] == .string(String(configuration.connectTimeout.components.seconds)))
            #expect(initial["max-download-result"] == .string(String(configuration.retention.maxFinished ?? -1)))
            // A dir that does not exist yet is created (inside the download directory), as aria2 does.
            let change: JSONValue = ["max-concurrent-downloads": "2", "max-overall-download-limit": "1M", "dir": "sub"]
            #expect(try await f.client.result("aria2.changeGlobalOption", [change]) == "OK")
            let changed = try await f.client.result("aria2.getGlobalOption")
            #expect(changed["max-concurrent-downloads"] == "2")
            #expect(changed["max-overall-download-limit"] == "1048576")
            #expect(changed["dir"] == .string(f.directory.appendingPathComponent("sub").path))
            #expect(await f.manager.maxConcurrentDownloads == 2)
            let gid = try await f.add(f.url("in-sub.bin"))
            try await f.finished(gid)
            #expect(FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("sub/in-sub.bin").path))
            #expect(try await f.client.error("aria2.changeGlobalOption", [["dir": "/"]]).message.contains("outside the download directory"))
            let nested = try await f.add(f.url("nested.bin"), ["dir": "new/deeper"])
            try await f.finished(nested)
            #expect(FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("sub/new/deeper/nested.bin").path))
            #expect(try await f.client.error("aria2.addUri", [[.string(f.url("x.bin"))], ["dir": "../../outside-new"]]).message
                .contains("outside the download directory"))
            #expect(!FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("../outside-new").path))
            #expect(try await f.client.error("aria2.changeGlobalOption", [["max-concurrent-downloads": "0", "split": "2"]]).code == 1)
            #expect(try await f.client.result("aria2.getGlobalOption") == changed)
        }
    }

    /// The daemon's own methods: version, session, saving (refused without a store on disk), shutdown requests, a clear
    /// refusal for BitTorrent and Metalink, and no peers for an HTTP download.
    @Test func daemonMethods() async throws {
        try await Aria2Fixture.run { f in
            #expect(try await f.client.result("aria2.getVersion")["version"] == .string(HaulVersion.current))
            let session = try await f.client.result("aria2.getSessionInfo")["sessionId"]?.stringValue
            #expect(session?.count == 40)
            #expect(try await f.client.result("aria2.getSessionInfo")["sessionId"]?.stringValue == session)
            // The fixture's manager keeps its downloads in memory: nothing to save them to.
            #expect(try await f.client.error("aria2.saveSession").message.contains("in memory"))
            #expect(try await f.client.result("aria2.shutdown") == "OK")
            #expect(try await f.client.result("aria2.forceShutdown") == "OK")
            #expect(f.shutdownRequests.withLockedValue { $0 } == [false, true])
            for (method, params) in [("aria2.addTorrent", ["AAAA"]), ("aria2.addMetalink", ["AAAA"])] as [(String, [JSONValue])] {
                let error = try await f.client.error(method, params)
                #expect(error.code == 1)
                #expect(error.message.contains("not supported"))
            }
            // getPeers: [] for an HTTP download, as aria2 answers; an unknown GID is an error.
            let gid = try await f.add(f.url("peers.bin", size: 1000))
            #expect(try await f.client.result("aria2.getPeers", [.string(gid)]) == .array([]))
            #expect(try await f.client.error("aria2.getPeers", ["00000000000000ff"]).message == "GID 00000000000000ff is not found")
            let methods = try await f.client.result("system.listMethods").arrayValue ?? []
            #expect(methods.count == Aria2Service.methodNames.count + 3)
            #expect(try await f.client.result("system.listNotifications") == .array(Aria2Notifications.names.map(JSONValue.string)))
        }
    }

    /// A running download has one server, with the URI after redirects; others have none.
    @Test func serversOfARunningDownload() async throws {
        try await Aria2Fixture.run { f in
            let gid = try await f.add(f.url("srv.bin", size: 2_000_000, rate: 100_000))
            try await f.sink.waitFor("aria2.onDownloadStart", gid: gid)
            let servers = try await f.client.result("aria2.getServers", [.string(gid)])
            #expect(servers.arrayValue?.first?["index"] == "1")
            #expect(servers.arrayValue?.first?["servers"]?.arrayValue?.first?["currentUri"] == .string(f.url("srv.bin", size: 2_000_000, rate: 100_000)))
            #expect(try await f.client.result("aria2.pause", [.string(gid)]) == .string(gid))
            #expect(try await f.client.error("aria2.getServers", [.string(gid)]).message == "No active download for GID#\(gid)")
        }
    }
}

/// A loopback port that takes connections (the kernel completes them) and never answers: a
/// request to it waits for its response until the client gives up.
private final class SilentListener: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        (descriptor, port) = try LoopbackPort.listening()
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
