import Foundation
import Haul
import HaulTestServer
import HaulDaemon
import HaulTestSupport
import Testing
@testable import HaulCLI

/// aria2's options for segmented downloads and speed limits: `-s`, `-x`, `--min-split-size`,
/// `--max-download-limit`, `--max-overall-download-limit`, and `split=` / `max-download-limit=`
/// in input files.
@Suite(.timeLimit(.minutes(2))) struct SegmentOptionsTests {
    /// Sizes and rates are digits with an optional K, M or G suffix in powers of 1024; anything else is refused.
    @Test func byteCounts() {
        #expect(DownloadPlan.byteCount("0") == 0)
        #expect(DownloadPlan.byteCount("1500") == 1500)
        #expect(DownloadPlan.byteCount("512K") == 512 << 10)
        #expect(DownloadPlan.byteCount("20m") == 20 << 20)
        #expect(DownloadPlan.byteCount(" 2G ") == 2 << 30)
        for bad in ["", "K", "-1", "1.5M", "1MB", "1 M", "ten", "99999999999999999999G"] {
            #expect(DownloadPlan.byteCount(bad) == nil, "\(bad)")
        }
    }

    /// `split=` and `max-download-limit=` apply to the URL above them; `--max-download-limit` to every other URL; 0 means no limit.
    @Test func perURLOptions() throws {
        let entries = try InputFile.parse("http://h/a\n  split=3\n  max-download-limit=256K\nhttp://h/b\n  max-download-limit=0\nhttp://h/c\n", source: "list")
        #expect(entries.first?.split == "3")
        #expect(entries.first?.maxDownloadLimit == "256K")
        let plan = try DownloadPlan(urls: ["http://h/d"], input: entries, options: DownloadPlan.Options(maxBytesPerSecond: 1 << 20))
        #expect(plan.requests.map(\.split) == [nil, 3, nil, nil])
        #expect(plan.requests.map(\.maxBytesPerSecond) == [1 << 20, 256 << 10, nil, 1 << 20])
    }

    /// A bad `split=` or `max-download-limit=` is a usage error naming the input line.
    @Test(arguments: ["  split=0", "  split=1025", "  split=many", "  max-download-limit=fast"])
    func badPerURLOptions(option: String) throws {
        let entries = try InputFile.parse("http://h/a\n\(option)", source: "list")
        #expect {
            try DownloadPlan(urls: [], input: entries, options: DownloadPlan.Options())
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.status == .usage && failure.message.contains("input line 1")
        }
    }

    /// `haul get -s 4 -x 4 --min-split-size 64K` fetches one file over several connections, and it arrives exact.
    @Test func getSplitsADownload() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let size = 1 << 20
                let content = Checksums.content(seed: 31, size: size)
                let url = server.url("/file/split.bin", ["size": "\(size)", "seed": "31", "rate": "\(2 << 20)"])
                let result = try await HaulProcess.run([
                    "get", "-s", "4", "-x", "4", "--min-split-size", "64K", "--max-overall-download-limit", "0",
                    "--checksum", "sha256=\(Checksums.sha256(content))", url,
                ], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "split.bin") == content)
                let requests = server.requests(forKey: "/file/split.bin")
                #expect(requests.count >= 4)
                #expect(requests.dropFirst().allSatisfy { $0.status == 206 && $0.header("if-range") != nil })
                #expect(directory.haulLeftovers().isEmpty)
            }
        }
    }

    /// Bad values of the new options exit with the usage status before anything is fetched.
    @Test(arguments: [["-s", "0"], ["-x", "0"], ["-x", "17"], ["--min-split-size", "0"], ["--min-split-size", "big"],
                      ["--max-download-limit", "1.5M"], ["--max-overall-download-limit", "-1"]])
    func badOptionsAreUsageErrors(options: [String]) async throws {
        try await withTemporaryDirectory { directory in
            let result = try await HaulProcess.run(["get"] + options + ["http://127.0.0.1:9/never"], in: directory.url)
            #expect(result.status == 2, "stderr: \(result.stderr)")
        }
    }

    /// `haul daemon` takes the same options with the same checks, and `haul add` the
    /// per-download ones: refused while parsing, which `haul` turns into status 2. (Parsed in
    /// process: a daemon that wrongly accepted them would start and not exit.)
    @Test(arguments: [["daemon", "-s", "0"], ["daemon", "-x", "17"], ["daemon", "--min-split-size", "big"],
                      ["daemon", "--max-overall-download-limit", "fast"], ["daemon", "--timeout", "0"],
                      ["daemon", "--connect-timeout=-1"], ["add", "-x", "0", "http://h/f"],
                      ["add", "-s", "0", "http://h/f"], ["add", "-s", "1025", "http://h/f"], ["daemon", "-s", "1025"],
                      ["add", "--max-download-limit", "1.5M", "http://h/f"]])
    func daemonAndAddCheckTheSameOptions(arguments: [String]) {
        #expect {
            try HaulCommand.parseAsRoot(arguments)
        } throws: { error in
            HaulCommand.exitCode(for: error) == .validationFailure && HaulCommand.message(for: error).hasPrefix("--")
        }
    }

    /// The daemon's options become every session's configuration: a request's own split is
    /// capped only by the ceiling, one without gets min(-s, -x), and one limiter is shared.
    @Test func daemonOptionsConfigureTheSessions() throws {
        let command = try #require(try HaulCommand.parseAsRoot([
            "daemon", "-s", "6", "-x", "3", "--min-split-size", "1M", "--max-download-limit", "100K",
            "--max-overall-download-limit", "2M", "--timeout", "7.5", "--connect-timeout", "2",
        ]) as? DaemonCommand)
        let transfers = command.transfers.daemonTransfers
        #expect(transfers == DaemonTransferOptions(
            split: 6, maxConnectionPerServer: 3, minSplitSize: 1 << 20, maxDownloadLimit: 100 << 10,
            maxOverallDownloadLimit: 2 << 20, connectTimeout: .seconds(2), readTimeout: .milliseconds(7500)))
        var configuration = DownloadManager.Configuration()
        let limiter = SpeedLimiter(bytesPerSecond: transfers.maxOverallDownloadLimit)
        transfers.apply(to: &configuration, sharing: limiter)
        #expect(configuration.split == 3)
        #expect(configuration.maxConnectionsPerServer == DaemonTransferOptions.connectionCeiling)
        #expect(configuration.minSegmentSize == 1 << 20)
        #expect(configuration.sharedSpeedLimiter === limiter)
        #expect(configuration.readTimeout == .milliseconds(7500))
        #expect(configuration.connectTimeout == .seconds(2))
        let plain = try #require(try HaulCommand.parseAsRoot(["daemon"]) as? DaemonCommand)
        #expect(plain.transfers.daemonTransfers == DaemonTransferOptions())
    }
}
