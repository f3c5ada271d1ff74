import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// aria2's transfer options in the daemon reach the engine: `split` with
/// `max-connection-per-server` splits a download, `max-download-limit` limits one (and changes
/// while it runs, without a restart), `max-overall-download-limit` is the manager's global
/// limit, and the daemon's defaults apply to downloads that set nothing.
@Suite(.timeLimit(.minutes(2))) struct Aria2TransferOptionTests {
    /// Small segments, so that a 1 MiB file is worth splitting.
    static let splittable = DaemonTransferOptions(minSplitSize: 64 << 10)

    /// `bytes=START-…` → START.
    static func rangeStart(_ request: RecordedRequest) -> Int? {
        guard let range = request.header("range"), range.hasPrefix("bytes=") else { return nil }
        return Int(range.dropFirst(6).prefix { $0 != "-" })
    }

    /// split=4 with max-connection-per-server=4 fetches the file in four ranges side by side,
    /// and getOption lists the two options as given.
    @Test func splitAndConnectionsPerServerSplitADownload() async throws {
        try await Aria2Fixture.run(transfers: Self.splittable) { f in
            let size = 1 << 20
            // Throttled per connection, so that the segments are under way side by side.
            let url = f.url("split.bin", size: size, seed: 41, rate: 1 << 20, extra: ["key": "split"])
            let gid = try await f.add(url, ["split": "4", "max-connection-per-server": "4"])
            try await f.finished(gid)
            #expect(try await f.status(gid, ["status"]) == ["status": "complete"])
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("split.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 41, size: size)))
            let starts = Set(f.server.requests(forKey: "split").dropFirst().compactMap(Self.rangeStart))
            #expect(starts.isSuperset(of: [262_144, 524_288, 786_432]), "ranges: \(starts.sorted())")
            #expect(f.server.peakConcurrentResponses(forKey: "split") >= 2)
            let options = try await f.client.result("aria2.getOption", [.string(gid)])
            #expect(options["split"] == "4")
            #expect(options["max-connection-per-server"] == "4")
        }
    }

    /// aria2's defaults (split 5, one connection per server) keep a download on one
    /// connection; the daemon's -x raises them for downloads that set nothing.
    @Test(arguments: [1, 3])
    func daemonDefaultsApplyToDownloadsThatSetNothing(connections: Int) async throws {
        var transfers = Self.splittable
        transfers.maxConnectionPerServer = connections
        try await Aria2Fixture.run(transfers: transfers) { f in
            let size = 1 << 20
            let gid = try await f.add(f.url("plain.bin", size: size, seed: 42, rate: 1 << 20, extra: ["key": "plain"]))
            try await f.finished(gid)
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("plain.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 42, size: size)))
            let requests = f.server.requests(forKey: "plain")
            if connections == 1 {
                #expect(requests.count == 1)
                #expect(requests.first?.header("range") == nil)
            } else {
                #expect(requests.count >= connections, "one plain GET, then the other segments in ranges")
                #expect(f.server.peakConcurrentResponses(forKey: "plain") >= 2)
            }
            let options = try await f.client.result("aria2.getOption", [.string(gid)])
            #expect(options["split"] == "5", "the default split, as aria2 lists it")
            #expect(options["max-connection-per-server"] == .string(String(connections)))
        }
    }

    /// A per-download limit holds the download back (measured as bytes over time, with a wide
    /// margin); removed with changeOption while it runs, the download finishes at once from
    /// where it was, without being restarted.
    @Test func downloadLimitAppliesAndChangesWhileRunning() async throws {
        try await Aria2Fixture.run { f in
            let size = 16 << 20
            let limit: Int64 = 1 << 20
            let began = ContinuousClock.now
            let gid = try await f.add(f.url("limited.bin", size: size, seed: 43, extra: ["key": "limited"]), ["max-download-limit": "1M"])
            let id = try #require(DownloadID(gid))
            #expect(await f.manager.snapshot(id)?.request.maxBytesPerSecond == limit)
            #expect(try await f.client.result("aria2.getOption", [.string(gid)])["max-download-limit"] == "1048576")
            // Unlimited, 16 MiB over loopback takes a fraction of a second. At 1 MiB/s, 3 MiB
            // take at least 1.75 s: the bucket's first quarter second and one read of up to
            // 1 MiB may arrive before the limit holds the transfer back.
            let received = try await waitForValue("3 MiB to arrive", within: .seconds(60)) {
                let done = Int64(try await f.status(gid, ["completedLength"])["completedLength"]?.stringValue ?? "") ?? 0
                return done >= 3 << 20 ? done : nil
            }
            let elapsed = ContinuousClock.now - began
            #expect(received < Int64(size), "the limit held the download back")
            #expect(elapsed >= .seconds(1), "3 MiB at 1 MiB/s arrived after \(elapsed)")

            #expect(try await f.client.result("aria2.changeOption", [.string(gid), ["max-download-limit": "0"]]) == "OK")
            #expect(await f.manager.snapshot(id)?.request.maxBytesPerSecond == nil)
            try await f.finished(gid)
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("limited.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 43, size: size)))
            #expect(f.server.requests(forKey: "limited").count == 1, "not restarted")
            #expect(f.sink.received.filter { $0.gid == gid && $0.method == "aria2.onDownloadStart" }.count == 1)
        }
    }

    /// The daemon's per-download default applies to new downloads; changeGlobalOption changes
    /// it for later ones, and its overall limit is the manager's global limit, live.
    @Test func globalLimitsReachTheManager() async throws {
        var transfers = DaemonTransferOptions()
        transfers.maxDownloadLimit = 100 << 10
        transfers.maxOverallDownloadLimit = 1 << 20
        try await Aria2Fixture.run(transfers: transfers) { f in
            #expect(await f.manager.globalSpeedLimit == 1 << 20)
            let global = try await f.client.result("aria2.getGlobalOption")
            #expect(global["max-overall-download-limit"] == "1048576")
            #expect(global["max-download-limit"] == "102400")
            let first = try #require(DownloadID(try await f.add(f.url("first.bin"), ["pause": "true"])))
            #expect(await f.manager.snapshot(first)?.request.maxBytesPerSecond == 100 << 10)

            let change: JSONValue = ["max-overall-download-limit": "0", "max-download-limit": "2M", "split": "3", "max-connection-per-server": "2"]
            #expect(try await f.client.result("aria2.changeGlobalOption", [change]) == "OK")
            #expect(await f.manager.globalSpeedLimit == nil)
            let second = try #require(DownloadID(try await f.add(f.url("second.bin"), ["pause": "true"])))
            let request = try #require(await f.manager.snapshot(second)?.request)
            #expect(request.maxBytesPerSecond == 2 << 20)
            #expect(request.split == 2, "min(split 3, 2 per server)")
            #expect(await f.manager.snapshot(first)?.request.maxBytesPerSecond == 100 << 10, "earlier downloads keep theirs")
        }
    }

    /// Changing split on a paused download changes its connections, combined with what it was
    /// given before; the ceiling of 16 holds whatever is asked.
    @Test func changingConnectionsOfAPausedDownload() async throws {
        try await Aria2Fixture.run { f in
            let gid = try await f.add(f.url("paused.bin"), ["pause": "true", "split": "8"])
            let id = try #require(DownloadID(gid))
            #expect(await f.manager.snapshot(id)?.request.split == 1, "split 8, but one connection per server")
            #expect(try await f.client.result("aria2.changeOption", [.string(gid), ["max-connection-per-server": "6"]]) == "OK")
            #expect(await f.manager.snapshot(id)?.request.split == 6)
            #expect(try await f.client.result("aria2.changeOption", [.string(gid), ["split": "40", "max-connection-per-server": "16"]]) == "OK")
            #expect(await f.manager.snapshot(id)?.request.split == 16)
            let options = try await f.client.result("aria2.getOption", [.string(gid)])
            #expect(options["split"] == "40")
            #expect(options["max-connection-per-server"] == "16")
        }
    }

    /// Managers given one shared limiter (the daemon's sessions) have one global limit: a
    /// change through any of them is the limit of all.
    @Test func sessionsShareTheOverallLimit() async throws {
        var configuration = RPCTest.fastConfiguration()
        let transfers = DaemonTransferOptions(maxOverallDownloadLimit: 512 << 10)
        transfers.apply(to: &configuration, sharing: SpeedLimiter(bytesPerSecond: transfers.maxOverallDownloadLimit))
        let first = DownloadManager(configuration: configuration)
        let second = DownloadManager(configuration: configuration)
        #expect(await first.globalSpeedLimit == 512 << 10)
        await second.setGlobalSpeedLimit(64 << 10)
        #expect(await first.globalSpeedLimit == 64 << 10)
        await first.shutdown()
        await second.shutdown()
    }
    /// Changes of one download sent at once are made one after the other: the restart that
    /// new connections need does not write back a limit that another change set meanwhile;
    /// the running download keeps its slot and its bytes, and splits the rest.
    @Test func concurrentChangesOfOneDownloadKeepEach() async throws {
        try await Aria2Fixture.run(transfers: Self.splittable) { f in
            let size = 2 << 20
            // Slow enough (256 KiB/s a connection) that the download is still running when the
            // second of the two changes, queued behind the first one's restart, is made.
            let gid = try await f.add(f.url("both.bin", size: size, seed: 47, rate: 1 << 18, extra: ["key": "both"]))
            let id = try #require(DownloadID(gid))
            try await waitUntil("64 KiB to arrive") { await (f.manager.snapshot(id)?.progress.completedBytes ?? 0) >= 64 << 10 }
            async let connections = f.client.result("aria2.changeOption", [.string(gid), ["split": "4", "max-connection-per-server": "4"]])
            async let limit = f.client.result("aria2.changeOption", [.string(gid), ["max-download-limit": "3M"]])
            #expect(try await connections == "OK")
            #expect(try await limit == "OK")
            let options = try await f.client.result("aria2.getOption", [.string(gid)])
            #expect(options["split"] == "4")
            #expect(options["max-download-limit"] == "3145728")
            let request = try #require(await f.manager.snapshot(id)?.request)
            #expect(request.split == 4)
            #expect(request.maxBytesPerSecond == 3 << 20)
            try await f.finished(gid)
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("both.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 47, size: size)))
            let requests = f.server.requests(forKey: "both")
            #expect(requests.dropFirst().allSatisfy { $0.status == 206 }, "continued from its bytes after the restart")
            #expect(requests.count >= 3, "the rest went over several connections")
        }
    }
}
