import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// aria2's option methods end to end, as front-ends use them: everything Haul honours is
/// listed in aria2's forms, a listing given back is accepted and changes nothing, what Haul
/// does not honour is refused by name (except the blind-sent options), plus the file path of
/// a running download and `saveSession`.
@Suite(.timeLimit(.minutes(3))) struct Aria2OptionRPCTests {
    /// getGlobalOption and getOption list every option Haul honours, in aria2's forms (bytes,
    /// whole seconds, "true"/"false"), the daemon's settings included.
    @Test func listsEveryHonouredOption() async throws {
        try await Aria2Fixture.run { f in
            let global = try await f.client.result("aria2.getGlobalOption")
            let configuration = f.manager.configuration
            let expected: [String: JSONValue] = [
                "dir": .string(f.directory.path), "max-concurrent-downloads": "4", "max-overall-download-limit": "0",
                "max-download-limit": "0", "split": "5", "max-connection-per-server": "1", "allow-overwrite": "false",
                "auto-file-renaming": "true", "user-agent": .string(configuration.userAgent),
                "min-split-size": .string(String(configuration.minSegmentSize)), "timeout": "10", "connect-timeout": "5",
                // The fixture's policy: no quick retries and no waiting, so one try; its 5 ms wait lists as 1 s.
                "max-tries": "1", "retry-wait": "1", "check-certificate": "true", "continue": "false",
                "max-download-result": .string(String(configuration.retention.maxFinished ?? -1)),
            ]
            #expect(global == .object(expected))

            let gid = try await f.add(f.url("listed.bin"), ["pause": "true", "split": 3, "header": ["X-A: 1"]])
            let options = try #require(try await f.client.result("aria2.getOption", [.string(gid)]).objectValue)
            for name in ["min-split-size", "timeout", "connect-timeout", "max-tries", "retry-wait", "check-certificate",
                         "continue", "user-agent", "allow-overwrite", "auto-file-renaming", "max-download-limit", "dir"] {
                #expect(options[name] == expected[name], "getOption \(name)")
            }
            #expect(options["split"] == "3")
            #expect(options["header"] == "X-A: 1")
            #expect(options["max-download-result"] == nil)
        }
    }

    /// What a front-end's settings dialog does: give back every option it was listed, with
    /// the options front-ends send unasked and blank fields. It answers "OK" and changes
    /// nothing, globally and for a download.
    @Test func listingsGivenBackChangeNothing() async throws {
        try await Aria2Fixture.run { f in
            let blind: [String: JSONValue] = [
                "bt-max-peers": "55", "file-allocation": "prealloc", "max-upload-limit": .integer(0), "enable-rpc": .bool(true),
                "http-user": "", "http-passwd": "", "all-proxy-user": "", "ftp-proxy": "", "out": "", "referer": "",
            ]
            let global = try #require(try await f.client.result("aria2.getGlobalOption").objectValue)
            #expect(try await f.client.result("aria2.changeGlobalOption", [.object(global.merging(blind) { own, _ in own })]) == "OK")
            #expect(try await f.client.result("aria2.getGlobalOption") == .object(global))

            let gid = try await f.add(f.url("dialog.bin", size: 2000, seed: 4), ["pause": "true", "out": "dialog.bin"])
            let listed = try #require(try await f.client.result("aria2.getOption", [.string(gid)]).objectValue)
            let request = await f.manager.snapshot(try #require(DownloadID(gid)))?.request
            var given = listed.merging(blind) { own, _ in own }
            given["out"] = listed["out"]
            #expect(try await f.client.result("aria2.changeOption", [.string(gid), .object(given)]) == "OK")
            #expect(try await f.client.result("aria2.getOption", [.string(gid)]) == .object(listed))
            #expect(await f.manager.snapshot(try #require(DownloadID(gid)))?.request == request)
        }
    }

    /// An option Haul does not honour fails the call with an error naming it, and nothing of
    /// the call is applied: not added, not changed.
    @Test func unsupportedOptionsAreRefusedByName() async throws {
        try await Aria2Fixture.run { f in
            let add = try await f.client.error("aria2.addUri", [[.string(f.url("refused.bin"))], ["http-user": "bob", "http-passwd": "pw"]])
            #expect(add.code == 1)
            #expect(add.message.contains("'--http-passwd'"))
            #expect(try await f.client.result("aria2.tellWaiting", [0, 10]) == [])
            #expect(try await f.client.result("aria2.tellActive") == [])

            let gid = try await f.add(f.url("kept.bin"), ["pause": "true"])
            let before = try await f.client.result("aria2.getOption", [.string(gid)])
            for options in [["max-tries": "3", "split": "2"], ["timeout": "5"], ["no-such-option": "1"],
                            ["max-concurrent-downloads": "2"], ["pause": "false"]] as [JSONValue] {
                let error = try await f.client.error("aria2.changeOption", [.string(gid), options])
                #expect(error.code == 1)
                let name = try #require(options.objectValue?.keys.first { $0 != "split" })
                #expect(error.message.contains("'--\(name)'"), "\(error.message)")
            }
            #expect(try await f.client.result("aria2.getOption", [.string(gid)]) == before)

            let globalBefore = try await f.client.result("aria2.getGlobalOption")
            let timeout = try await f.client.error("aria2.changeGlobalOption", [["timeout": 5, "split": "2"]])
            #expect(timeout.message.contains("'--timeout'") && timeout.message.contains("--timeout"))
            let bogus = try await f.client.error("aria2.changeGlobalOption", [["bogus-option": "1"]])
            #expect(bogus.message.contains("'--bogus-option'") && bogus.message.contains("does not support"))
            #expect(try await f.client.result("aria2.getGlobalOption") == globalBefore)
        }
    }

    /// files[0].path of a download added without `out`: empty before the server answered (as
    /// aria2), the path its URL gives while it runs, where it was placed once complete.
    @Test func runningDownloadShowsItsPath() async throws {
        try await Aria2Fixture.run { f in
            let waiting = try await f.add(f.url("later.bin"), ["pause": "true"])
            #expect(try await f.status(waiting, ["files"])["files"]?.arrayValue?.first?["path"] == "")

            let gid = try await f.add(f.url("running.bin", size: 400_000, seed: 6, rate: 100_000))
            let id = try #require(DownloadID(gid))
            try await waitUntil("bytes to arrive") {
                guard let info = await f.manager.snapshot(id) else { return false }
                return info.state == .running && info.progress.completedBytes > 0
            }
            let expected = JSONValue.string(f.directory.appendingPathComponent("running.bin").path)
            let status = try await f.status(gid, ["status", "files"])
            #expect(status["status"] == "active")
            #expect(status["files"]?.arrayValue?.first?["path"] == expected)
            #expect(try await f.client.result("aria2.getFiles", [.string(gid)]).arrayValue?.first?["path"] == expected)
            try await f.finished(gid)
            #expect(try await f.status(gid, ["files"])["files"]?.arrayValue?.first?["path"] == expected)
        }
    }

    /// saveSession answers "OK" only when the downloads are saved: a manager whose store is on
    /// disk has them back after a restart; one kept in memory is an error, not "OK".
    @Test func saveSessionIsHonest() async throws {
        try await Aria2Fixture.run { f in
            let error = try await f.client.error("aria2.saveSession")
            #expect(error.code == 1)
            #expect(error.message.contains("in memory"))
        }
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let state = try temporary.subdirectory("state")
        let downloads = try temporary.subdirectory("downloads")
        let manager = try await DownloadManager.open(stateDirectory: state, configuration: RPCTest.fastConfiguration())
        let service = try Aria2Service(manager: manager, configuration: Aria2Configuration(downloadDirectory: downloads) { _ in })
        var methods = RPCMethodTable()
        service.register(in: &methods)
        let client = HandlerClient(handler: JSONRPCHandler(methods: methods, secret: try RPCSecret("s")))
        let gid = try await client.result("aria2.addUri", [["http://127.0.0.1:9/saved.bin"], ["pause": "true"]])
        #expect(try await client.result("aria2.saveSession") == "OK")
        await manager.shutdown()
        let reopened = try await DownloadManager.open(stateDirectory: state, configuration: RPCTest.fastConfiguration())
        let ids = await reopened.downloadIDs(inStates: Set(DownloadState.allCases))
        #expect(ids.map(\.description) == [try #require(gid.stringValue)])
        await reopened.shutdown()
    }
}
