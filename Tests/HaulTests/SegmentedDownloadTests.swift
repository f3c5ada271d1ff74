import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

@Suite("Segmented downloads end to end", .timeLimit(.minutes(2)))
struct SegmentedDownloadTests {
    /// A fast configuration that splits downloads over `split` connections, in segments of at
    /// least `minSegmentSize`.
    static func configuration(split: Int = 4, minSegmentSize: Int64 = 64 << 10, checkpointBytes: Int64 = 64 << 10) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(checkpointBytes: checkpointBytes)
        configuration.split = split
        configuration.maxConnectionsPerServer = split
        configuration.minSegmentSize = minSegmentSize
        return configuration
    }

    /// `bytes=START-` or `bytes=START-END` → START.
    static func rangeStart(_ request: RecordedRequest) -> Int? {
        guard let range = request.header("range"), range.hasPrefix("bytes=") else { return nil }
        return Int(range.dropFirst(6).prefix { $0 != "-" })
    }

    /// Downloads the 1 MiB file `name` (seed `seed`, more query in `extra`) with a sha256 to
    /// verify, in a fresh manager with this suite's configuration, and checks that it completed
    /// exact, verified, with nothing left behind.
    static func fetchVerified(_ server: TestServer, _ name: String, seed: UInt64, extra: [String: String]) async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        let size = 1 << 20
        let bytes = TestContent.bytes(seed: seed, size: size)
        let sha = try Checksum(.sha256, hex: Support.sha256(bytes))
        let query = ["size": "\(size)", "seed": "\(seed)"].merging(extra) { $1 }
        let request = Support.request(server, "/file/\(name)", query, in: dir, checksums: [sha])
        let info = try await Support.downloadOne(request, configuration: configuration())
        #expect(info.state == .completed)
        #expect(info.verifiedChecksums.contains(sha))
        #expect(Support.contents(dir.appendingPathComponent(name)) == bytes)
        #expect(Support.leftovers(dir).isEmpty)
    }

    /// A file the server offers in ranges is fetched over several connections at once, each segment with a closed range and If-Range, and arrives exact with its checksum verified.
    @Test func splitOverSeveralConnections() async throws {
        try await withTestServer { server in
            let size = 1 << 20
            // Throttled per connection, so that the segments are under way side by side.
            try await Self.fetchVerified(server, "split.bin", seed: 101, extra: ["rate": "\(1 << 20)"])

            let requests = server.requests(forKey: "/file/split.bin")
            #expect(requests.first?.header("range") == nil, "the first request is a plain GET")
            let ranged = requests.dropFirst()
            #expect(Set(ranged.compactMap(Self.rangeStart)).isSuperset(of: [262_144, 524_288, 786_432]))
            #expect(ranged.allSatisfy { $0.header("range")?.contains("-") == true && $0.header("range")?.hasSuffix("-") == false })
            #expect(ranged.allSatisfy { $0.header("if-range") == "\"s101-v0-\(size)\"" && $0.status == 206 })
            #expect(server.peakConcurrentResponses(forKey: "/file/split.bin") >= 2, "several connections at once")
        }
    }

    /// When one segment is slow, the connections that finished take halves of what it has left, so the download does not wait for it.
    @Test func tailStealingRelievesASlowSegment() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 1 << 20
            let slowStart = 786_432
            // Only the response for the last segment is slow: 32 KiB/s, 8 s for its 256 KiB alone.
            let query = ["size": "\(size)", "seed": "102", "rate": "\(32 << 10)", "rateStart": "\(slowStart)"]
            let request = Support.request(server, "/file/tail.bin", query, in: dir)
            let info = try await Support.downloadOne(request, configuration: Self.configuration(minSegmentSize: 16 << 10))
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("tail.bin")) == TestContent.bytes(seed: 102, size: size))
            let starts = server.requests(forKey: "/file/tail.bin").compactMap(Self.rangeStart)
            let stolen = starts.filter { $0 > slowStart }
            #expect(!stolen.isEmpty, "ranges inside the slow segment were taken by other connections: \(starts)")
        }
    }

    /// Without range support, or with only a weak validator, one connection fetches the file exactly as without splitting.
    @Test(arguments: [["ranges": "0"], ["etag": "weak", "lm": "0"], ["etag": "none", "lm": "0"], ["gzip": "1"]])
    func fallsBackToOneConnection(extra: [String: String]) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            var query = ["size": "\(1 << 20)", "seed": "103"]
            query.merge(extra) { $1 }
            let info = try await Support.downloadOne(Support.request(server, "/file/one.bin", query, in: dir), configuration: Self.configuration())
            #expect(info.state == .completed)
            let requests = server.requests(forKey: "/file/one.bin")
            #expect(requests.count == 1)
            #expect(requests.first?.header("range") == nil)
            if extra["gzip"] == nil {
                #expect(Support.contents(dir.appendingPathComponent("one.bin")) == TestContent.bytes(seed: 103, size: 1 << 20))
            }
        }
    }

    /// A server that offers ranges on the first request but ignores them on the segments' (a
    /// whole 200 each) makes the download go on with one connection; as that server serves no
    /// range any more, it fetches the file whole: exact, its checksum verified, never a splice.
    @Test func segmentsAnsweredWholeFallBackToOneConnection() async throws {
        try await withTestServer { server in
            try await Self.fetchVerified(server, "whole.bin", seed: 108, extra: ["rangesFor": "1", "rate": "\(2 << 20)"])
            let requests = server.requests(forKey: "/file/whole.bin")
            let log = requests.map { "\($0.header("range") ?? "whole") → \($0.status)" }
            #expect(requests.count >= 3, "a first request, segments answered whole, then one connection again: \(log)")
            #expect(requests.dropFirst().contains { $0.header("range") != nil && $0.status == 200 }, "\(log)")
        }
    }

    /// A file too small for two segments of the minimum size, or a request that says split 1, takes one connection.
    @Test func smallFilesAndSplitOneUseOneConnection() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let small = Support.request(server, "/file/small.bin", ["size": "\(100 << 10)", "seed": "104"], in: dir)
            var single = Support.request(server, "/file/single.bin", ["size": "\(1 << 20)", "seed": "105"], in: dir)
            single.split = 1
            let configuration = Self.configuration()
            for request in [small, single] {
                let info = try await Support.downloadOne(request, configuration: configuration)
                #expect(info.state == .completed)
            }
            #expect(server.requests(forKey: "/file/small.bin").count == 1)
            #expect(server.requests(forKey: "/file/single.bin").count == 1)
        }
    }

    /// When the file changes while its segments are fetched, If-Range gets the new file and the download starts over: the result is the new file, never a splice of both.
    @Test func changedFileBetweenSegmentsIsNeverSpliced() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 1 << 20
            let newBytes = TestContent.bytes(seed: 107, size: size)
            let sha = try Checksum(.sha256, hex: Support.sha256(newBytes))
            // Version 0 for the first two requests, version 1 (seed 107) from the third on.
            let query = ["size": "\(size)", "seed": "106", "changeAfter": "2", "rate": "\(1 << 20)"]
            let info = try await Support.downloadOne(
                Support.request(server, "/file/changing.bin", query, in: dir, checksums: [sha]),
                configuration: Self.configuration())
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("changing.bin")) == newBytes)
            let requests = server.requests(forKey: "/file/changing.bin")
            #expect(requests.contains { $0.header("range") != nil && $0.status == 200 }, "If-Range with the old ETag got the whole new file")
            #expect(requests.last?.header("range") == nil && requests.last?.status == 200, "the download started over")
            #expect(Support.leftovers(dir).isEmpty)
        }
    }

    /// A checksum that does not match the assembled segments fails the download; nothing is placed.
    @Test func wrongChecksumOfSegmentsPlacesNothing() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let wrong = try Checksum(.sha256, hex: String(repeating: "0", count: 64))
            var configuration = Self.configuration()
            configuration.retry = RetryPolicy(maxRetries: 0)
            let info = try await Support.downloadOne(
                Support.request(server, "/file/bad.bin", ["size": "\(1 << 20)", "seed": "108"], in: dir, checksums: [wrong]),
                configuration: configuration)
            #expect(info.state == .failed)
            #expect(info.error?.code == .checksumMismatch)
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad.bin").path))
            #expect(server.requests(forKey: "/file/bad.bin").count >= 2, "it was split")
        }
    }

    /// Connections that break after some bytes ask again for the rest of their segment, and the file still arrives exact.
    @Test func brokenConnectionsContinueTheirSegments() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 1 << 20
            // Every response is cut after 100 KB.
            let query = ["size": "\(size)", "seed": "109", "drop": "100000"]
            let info = try await Support.downloadOne(Support.request(server, "/file/drops.bin", query, in: dir), configuration: Self.configuration())
            #expect(info.state == .completed)
            #expect(Support.contents(dir.appendingPathComponent("drops.bin")) == TestContent.bytes(seed: 109, size: size))
            let requests = server.requests(forKey: "/file/drops.bin")
            #expect(requests.count >= 10)
            #expect(requests.dropFirst().allSatisfy { $0.status == 206 })
        }
    }

    /// A connection whose server falls silent mid-segment is taken over by the connection that finished: the download completes in its first attempt, long before the whole download would be silent for the read timeout (which, with no retries, would fail it).
    @Test func stalledConnectionIsTakenOver() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 1 << 20
            let bytes = TestContent.bytes(seed: 110, size: size)
            let sha = try Checksum(.sha256, hex: Support.sha256(bytes))
            // The first response (the first segment's) stops after 100,000 bytes and stays silent for 10 s.
            let query = ["size": "\(size)", "seed": "110", "drop": "100000", "dropTimes": "1", "stall": "10"]
            var configuration = Self.configuration(split: 2)
            configuration.retry = RetryPolicy(maxRetries: 0)
            // Below the 10 s stall, so that only a takeover completes it; not less: with the
            // whole suite on 2 cores, the second connection has taken more than 4 s to start.
            configuration.readTimeout = .seconds(8)
            configuration.stalledConnectionTimeout = .milliseconds(500)
            let request = Support.request(server, "/file/stalled.bin", query, in: dir, checksums: [sha])
            let info = try await Support.downloadOne(request, configuration: configuration)
            #expect(info.state == .completed, "\(info.error?.message ?? "")")
            #expect(info.attempts == 1)
            #expect(info.verifiedChecksums.contains(sha))
            #expect(Support.contents(dir.appendingPathComponent("stalled.bin")).map(Support.sha256) == sha.hex)
            #expect(Support.leftovers(dir).isEmpty)
            // Steals take upper halves of what is left above 100,000; only a takeover asks from
            // where the stalled response stopped (or below, if its last bytes had not arrived).
            let starts = server.requests(forKey: "/file/stalled.bin").compactMap(Self.rangeStart)
            #expect(starts.contains { $0 <= 100_000 }, "a range from the stalled connection's offset was requested: \(starts)")
        }
    }
}
