import Foundation
import Haul
import Testing
@testable import HaulCLI

/// The client commands' pure parts: reading aria2's answers, the list and status text, the
/// watch view, the connection options and the failure messages; no daemon, no I/O.
@Suite struct ClientCommandViewTests {
    static func entry(
        _ gid: String, _ status: String, total: Int64 = 1000, done: Int64 = 0, speed: Int64 = 0,
        path: String = "", url: String = "http://h/dir/file.bin", error: (String, String)? = nil
    ) throws -> Aria2Entry {
        var object: [String: Any] = [
            "gid": gid, "status": status, "totalLength": "\(total)", "completedLength": "\(done)",
            "downloadSpeed": "\(speed)", "dir": "/out",
            "files": [["index": "1", "path": path, "length": "\(total)", "uris": [["uri": url, "status": "used"]]]],
        ]
        if let error {
            object["errorCode"] = error.0
            object["errorMessage"] = error.1
        }
        return try JSONDecoder().decode(Aria2Entry.self, from: JSONSerialization.data(withJSONObject: object))
    }

    /// aria2's string numbers are read as numbers; the name comes from the path, else the URL; a length of 0 is unknown until the download completes.
    @Test func readsAria2Entries() throws {
        let running = try Self.entry("a1", "active", total: 4000, done: 1000, speed: 500)
        #expect(running.name == "file.bin")
        #expect(running.progress == TransferProgress(completedBytes: 1000, expectedBytes: 4000, bytesPerSecond: 500))
        #expect(running.path == nil)

        let placed = try Self.entry("a2", "complete", total: 0, path: "/out/empty.txt")
        #expect(placed.name == "empty.txt")
        #expect(placed.expectedBytes == 0)
        #expect(placed.progress.fractionCompleted == 1)
        #expect(try Self.entry("a3", "active", total: 0, done: 10).expectedBytes == nil)

        let failed = try Self.entry("a4", "error", error: ("3", "HTTP 404 Not Found"))
        #expect(failed.failureMessage == "HTTP 404 Not Found")
        #expect(try Self.entry("a5", "paused", speed: 700).progress.bytesPerSecond == 0, "only active downloads have a speed")

        let filtered = try JSONDecoder().decode(Aria2Entry.self, from: Data(#"{"gid":"b1","status":"waiting"}"#.utf8))
        #expect(filtered.name == "b1")
        #expect(filtered.completedLength == 0)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Aria2Entry.self, from: Data(#"{"gid":"b2","status":"active","totalLength":"lots"}"#.utf8))
        }
    }

    /// The table aligns its columns, shows a speed for active downloads only, and never cuts the name.
    @Test func tableLines() throws {
        let long = String(repeating: "n", count: 120) + ".bin"
        let lines = DownloadTable.lines([
            try Self.entry("2089b05ecca3d829", "active", total: 2048, done: 1024, speed: 1536),
            try Self.entry("00000000000000ff", "paused", total: 0, done: 5, url: "http://h/" + long),
        ])
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("GID               STATE   PROGRESS"))
        #expect(lines[1] == "2089b05ecca3d829  active       50%  1.0 KiB/2.0 KiB  1.5 KiB/s  file.bin")
        #expect(lines[2] == "00000000000000ff  paused       --%  5 B              -          \(long)")
        let nameColumn = lines[0].range(of: "NAME")!.lowerBound.utf16Offset(in: lines[0])
        #expect(lines.allSatisfy { $0.count > nameColumn })
    }

    /// status prints aligned facts, the speed and ETA only while active, and the error of a failed download.
    @Test func statusLines() throws {
        let active = StatusReport.lines(try Self.entry("2089b05ecca3d829", "active", total: 4096, done: 1024, speed: 1024))
        #expect(active.contains("gid        2089b05ecca3d829"))
        #expect(active.contains("progress   25%  1.0 KiB/4.0 KiB"))
        #expect(active.contains("speed      1.0 KiB/s"))
        #expect(active.contains("eta        3s"))
        let failed = StatusReport.lines(try Self.entry("2089b05ecca3d829", "error", error: ("3", "HTTP 404")))
        #expect(failed.contains("error      HTTP 404 (aria2 error code 3)"))
        #expect(!failed.contains { $0.hasPrefix("speed") })
    }

    /// The view follows downloads, prints a line that stays when one leaves the lists (done, failed, removed, forgotten), and counts the rest.
    @Test func watchViewFollowsDownloads() throws {
        var view = WatchView()
        let first = view.update(WatchSnapshot(
            waiting: [try Self.entry("q1", "waiting"), try Self.entry("p1", "paused", done: 300, url: "http://h/p.bin")],
            active: [try Self.entry("a1", "active", total: 1000, done: 250, speed: 100, url: "http://h/a.bin")],
            stat: Aria2GlobalStat(downloadSpeed: 100, numActive: 1, numWaiting: 2, numStopped: 4)), columns: 100)
        #expect(first.permanent.isEmpty)
        #expect(!first.isIdle)
        #expect(first.block.count == 3)
        #expect(first.block[0].hasPrefix("a.bin") && first.block[0].contains("[#####---------------]   25%"))
        #expect(first.block[1].hasPrefix("(paused) p.bin"))
        #expect(first.block[2] == "daemon  1 active, 1 waiting, 1 paused, 4 stopped  250 B/1000 B  100 B/s  ETA 8s")
        #expect(view.departures(waiting: [], active: []) == ["a1", "p1", "q1"])

        // a1 completed, q1 was removed and its result forgotten, p1 stays paused.
        let second = view.update(WatchSnapshot(
            waiting: [try Self.entry("p1", "paused", done: 300)],
            stat: Aria2GlobalStat(numWaiting: 1, numStopped: 5),
            departed: [try Self.entry("a1", "complete", total: 1000, done: 1000, path: "/out/a.bin")],
            forgotten: ["q1"]), columns: 100)
        #expect(second.permanent == ["done /out/a.bin (1000 bytes)", "removed file.bin"])
        #expect(second.isIdle, "only a paused download is left")
        #expect(second.block.last == "daemon  0 active, 0 waiting, 1 paused, 5 stopped")
        #expect(view.departures(waiting: [], active: []) == ["p1"])

        // Departed but not finished (paused between the two reads): still followed, no line.
        let third = view.update(WatchSnapshot(departed: [try Self.entry("p1", "waiting")]), columns: 100)
        #expect(third.permanent.isEmpty)
        #expect(view.followed["p1"]?.status == .waiting)
        let failed = view.update(WatchSnapshot(departed: [try Self.entry("p1", "error", error: ("3", "HTTP 404"))]), columns: 100)
        #expect(failed.permanent == ["failed file.bin: HTTP 404"])
        #expect(view.followed.isEmpty)
    }

    /// Many active downloads: at most ten bars and a line for the rest; a truncated waiting page is counted by the daemon's total; every line fits the width.
    @Test func watchBlockLimits() throws {
        let active = try (0..<13).map { try Self.entry(String(format: "%016x", $0), "active", total: 100, done: 10) }
        let block = WatchView.block(WatchSnapshot(
            waiting: [try Self.entry("w", "waiting")], waitingIsComplete: false, active: active,
            stat: Aria2GlobalStat(numActive: 13, numWaiting: 5000, numStopped: 0)), columns: 60)
        #expect(block.count == 12)
        #expect(block[10] == "… and 3 more running")
        #expect(block[11].hasPrefix("daemon  13 active, 5000 waiting or paused, 0 stopped"))
        #expect(block.allSatisfy { $0.count <= 59 })
        #expect(!WatchSnapshot(waiting: [try Self.entry("w", "waiting")]).isIdle, "a queued download keeps --until-done open")
    }

    /// The in-place redraw goes up over the previous block and clears before printing.
    @Test func liveBlockText() {
        #expect(LiveBlock.text(erasing: 0, permanent: [], block: ["a", "b"]) == "a\nb\n")
        #expect(LiveBlock.text(erasing: 2, permanent: ["done x"], block: ["c"]) == "\u{1B}[2A\r\u{1B}[Jdone x\nc\n")
    }

    /// --rpc takes an http(s) URL and means /jsonrpc when no path is given; the secret comes from --secret, else HAUL_RPC_SECRET.
    @Test func connectionOptions() throws {
        #expect(try DaemonConnectionOptions.endpointURL("http://127.0.0.1:6800").absoluteString == "http://127.0.0.1:6800/jsonrpc")
        #expect(try DaemonConnectionOptions.endpointURL("https://h:1/custom").absoluteString == "https://h:1/custom")
        #expect(throws: (any Error).self) { try DaemonConnectionOptions.endpointURL("ws://h:1/jsonrpc") }
        #expect(throws: (any Error).self) { try DaemonConnectionOptions.endpointURL("127.0.0.1:6800") }

        let fromEnvironment = try DaemonConnectionOptions.parse(["--rpc", "http://127.0.0.1:7000"])
        #expect(fromEnvironment.endpoint == .url(URL(string: "http://127.0.0.1:7000/jsonrpc")!))
        #expect(fromEnvironment.resolvedSecret(environment: ["HAUL_RPC_SECRET": "env"]) == "env")
        #expect(fromEnvironment.resolvedSecret(environment: ["HAUL_RPC_SECRET": ""]) == nil)
        let given = try DaemonConnectionOptions.parse(["--secret", "flag"])
        #expect(given.resolvedSecret(environment: ["HAUL_RPC_SECRET": "env"]) == "flag")
        #expect(given.endpoint == .unixSocket(path: DaemonEndpoint.defaultSocketPath))
        #expect(throws: (any Error).self) { try DaemonConnectionOptions.parse(["--socket", "/s", "--rpc", "http://h"]) }
    }

    /// addUri's options are aria2's strings, header an array, and options not given are left out.
    @Test func addOptionsEncoding() throws {
        let full = Aria2AddOptions(
            dir: "sub", out: "a.bin", header: ["A: 1", "B: 2"], checksum: "sha-256=ab", split: "4",
            maxConnectionPerServer: "2", maxDownloadLimit: "512000", pause: "true")
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(full)) as? [String: Any]
        #expect(object?["dir"] as? String == "sub")
        #expect(object?["out"] as? String == "a.bin")
        #expect(object?["header"] as? [String] == ["A: 1", "B: 2"])
        #expect(object?["checksum"] as? String == "sha-256=ab")
        #expect(object?["pause"] as? String == "true")
        #expect(object?["split"] as? String == "4")
        #expect(object?["max-connection-per-server"] as? String == "2")
        #expect(object?["max-download-limit"] as? String == "512000")
        #expect(object?.count == 8)
        #expect(String(decoding: try JSONEncoder().encode(Aria2AddOptions(header: [])), as: UTF8.self) == "{}")
    }

    /// Library errors from the RPC client become the documented statuses and messages.
    @Test func failureMapping() {
        let socket = DaemonEndpoint.unixSocket(path: "/tmp/x.sock")
        let missing = CommandFailure(daemon: HaulError(.daemonUnavailable, "refused"), endpoint: socket)
        #expect(missing.status == .daemonUnavailable)
        #expect(missing.message == "no haul daemon at /tmp/x.sock; start one with `haul daemon --socket /tmp/x.sock`")
        let standard = CommandFailure(daemon: HaulError(.daemonUnavailable, "refused"), endpoint: .tcp())
        #expect(standard.message.hasSuffix("start one with `haul daemon`"))
        let tcp = DaemonEndpoint.tcp(port: 7000)
        let unauthorized = CommandFailure(daemon: HaulError(.rpcError, "the daemon answered: Unauthorized (JSON-RPC error 1)", rpcCode: 1), endpoint: tcp)
        #expect(unauthorized.status == .daemonRefused)
        #expect(unauthorized.message.contains("--secret SECRET or set HAUL_RPC_SECRET"))
        let unknown = CommandFailure(daemon: HaulError(.rpcError, "the daemon answered: GID 01 is not found (JSON-RPC error 1)", rpcCode: 1), endpoint: socket)
        #expect(unknown.status == .daemonRefused)
        #expect(unknown.message.contains("GID 01 is not found"))
        #expect(CommandFailure(daemon: HaulError(.timeout, "slow"), endpoint: socket).status == .daemonUnavailable)
        #expect(ExitStatus.daemonUnavailable.rawValue == 12 && ExitStatus.daemonRefused.rawValue == 13)
    }
}
