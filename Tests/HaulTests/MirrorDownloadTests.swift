import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

@Suite("Downloads from mirrors end to end", .timeLimit(.minutes(2)))
struct MirrorDownloadTests {
    static let size = 1 << 20

    /// Splits over up to 4 connections, 2 per server, in segments of at least 64 KiB.
    static func splitting(split: Int = 4, perServer: Int = 2) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration()
        configuration.split = split
        configuration.maxConnectionsPerServer = perServer
        configuration.minSegmentSize = 64 << 10
        return configuration
    }

    /// The same file (`seed`) at `path` on `server`, with more query in `extra`.
    static func url(_ server: TestServer, _ path: String, seed: UInt64, _ extra: [String: String] = [:]) -> URL {
        URL(string: server.url(path, ["size": "\(size)", "seed": "\(seed)"].merging(extra) { $1 }))!
    }

    /// Downloads `primary` with `mirrors` and a sha256 of the file `seed` into a fresh
    /// directory, and checks that it completed exact and verified, with nothing left behind.
    static func fetchVerified(
        _ primary: URL, mirrors: [URL], seed: UInt64, configuration: DownloadManager.Configuration
    ) async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        let bytes = TestContent.bytes(seed: seed, size: size)
        let sha = try Checksum(.sha256, hex: Support.sha256(bytes))
        let request = DownloadRequest(url: primary, directory: dir, fileName: "m.bin", checksums: [sha], mirrors: mirrors)
        let info = try await Support.downloadOne(request, configuration: configuration)
        #expect(info.state == .completed, "\(String(describing: info.error))")
        #expect(info.verifiedChecksums.contains(sha))
        #expect(Support.contents(dir.appendingPathComponent("m.bin")) == bytes)
        #expect(Support.leftovers(dir).isEmpty)
    }

    /// A split download draws segments from two mirrors, one throttled and one dropping every connection mid-body, and the file arrives exact, with both servers having served ranges of it.
    @Test func throttledAndDroppingMirrors() async throws {
        try await withTestServer { slow in
            try await withTestServer { dropping in
                let primary = Self.url(slow, "/file/m.bin", seed: 301, ["rate": "\(512 << 10)"])
                let mirror = Self.url(dropping, "/file/m.bin", seed: 301, ["drop": "\(96 << 10)"])
                try await Self.fetchVerified(primary, mirrors: [mirror], seed: 301, configuration: Self.splitting())

                let fromMirror = dropping.requests(forKey: "/file/m.bin")
                #expect(fromMirror.filter { $0.status == 206 }.count >= 2, "the mirror served ranges, asked again after each drop")
                #expect(fromMirror.allSatisfy { $0.header("if-range") == "\"s301-v0-\(Self.size)\"" })
                #expect(slow.requests(forKey: "/file/m.bin").contains { $0.status == 206 || $0.status == 200 })
                #expect(slow.bytesSent(forKey: "/file/m.bin") > 0 && dropping.bytesSent(forKey: "/file/m.bin") > 0)
            }
        }
    }

    /// A mirror that holds another file (another validator, or the same validator with another length) is dropped after its first answer and none of its bytes are written: the file is the primary's, exact.
    @Test(arguments: [
        ([String: String](), ["seed": "999"]),
        (["etag": "none"], ["etag": "none", "size": "\(2 << 20)"]),
        // Ignores If-Range and proves nothing: no validator, or only a weak ETag.
        ([:], ["seed": "999", "etag": "none", "lm": "0", "ifRange": "0"]),
        ([:], ["seed": "999", "etag": "weak", "ifRange": "0"]),
    ])
    func inconsistentMirrorIsDropped(primaryExtra: [String: String], mirrorExtra: [String: String]) async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                let primary = Self.url(origin, "/file/m.bin", seed: 302, primaryExtra.merging(["rate": "\(2 << 20)"]) { $1 })
                let mirror = Self.url(other, "/file/m.bin", seed: 302, mirrorExtra)
                try await Self.fetchVerified(primary, mirrors: [mirror], seed: 302, configuration: Self.splitting())
                let asked = other.requests(forKey: "/file/m.bin")
                #expect(!asked.isEmpty, "the mirror was tried")
                #expect(asked.count <= 3, "and left out after its answer (asked \(asked.count) times)")
            }
        }
    }

    /// Authorization and Cookie given with the request go to the first URL's server only; a mirror on another server (another port) gets its own user info as Basic authorization, and no cookie.
    @Test func credentialsStayWithTheirServer() async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                let temporary = try TemporaryDirectory()
                defer { temporary.remove() }
                let dir = temporary.url
                let primary = Self.url(origin, "/file/m.bin", seed: 306, ["rate": "\(512 << 10)"])
                var parts = try #require(URLComponents(url: Self.url(other, "/file/m.bin", seed: 306), resolvingAgainstBaseURL: false))
                parts.user = "bob"
                parts.password = "mirror secret"
                let mirror = try #require(parts.url)
                let request = DownloadRequest(
                    url: primary, directory: dir, fileName: "m.bin",
                    headers: [HeaderField(name: "Authorization", value: "Bearer origin-token"), HeaderField(name: "Cookie", value: "c=1")],
                    mirrors: [mirror])
                let info = try await Support.downloadOne(request, configuration: Self.splitting())
                #expect(info.state == .completed)
                #expect(Support.contents(dir.appendingPathComponent("m.bin")) == TestContent.bytes(seed: 306, size: Self.size))
                let toOrigin = origin.requests(forKey: "/file/m.bin")
                #expect(!toOrigin.isEmpty && toOrigin.allSatisfy { $0.header("authorization") == "Bearer origin-token" && $0.header("cookie") == "c=1" })
                let toMirror = other.requests(forKey: "/file/m.bin")
                let basic = "Basic " + Data("bob:mirror secret".utf8).base64EncodedString()
                #expect(toMirror.contains { $0.status == 206 }, "the mirror was used")
                #expect(toMirror.allSatisfy { $0.header("authorization") == basic && $0.header("cookie") == nil })
            }
        }
    }

    /// With one connection, a first URL that refuses connections is passed over for the mirror.
    @Test func unreachablePrimaryFailsOverToTheMirror() async throws {
        try await withTestServer { server in
            // Held bound (connections refused) so that no other server of the run takes it.
            let reserved = try ReservedPort()
            defer { reserved.release() }
            let dead = URL(string: "http://127.0.0.1:\(reserved.port)/file/m.bin")!
            let mirror = Self.url(server, "/file/m.bin", seed: 303, ["ranges": "0"])
            try await Self.fetchVerified(dead, mirrors: [mirror], seed: 303, configuration: Support.fastConfiguration())
            #expect(server.requests(forKey: "/file/m.bin").count == 1)
        }
    }

    /// With one connection, a transfer whose server drops it mid-body continues from the next URI, resuming from the bytes kept (the mirror has the same validator), not from zero.
    @Test func singleStreamResumesFromTheNextURI() async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                let primary = Self.url(origin, "/file/m.bin", seed: 304, ["drop": "\(300_000)"])
                let mirror = Self.url(other, "/file/m.bin", seed: 304)
                try await Self.fetchVerified(primary, mirrors: [mirror], seed: 304, configuration: Self.splitting(split: 1, perServer: 1))
                let resumed = other.requests(forKey: "/file/m.bin")
                #expect(resumed.first?.status == 206)
                let start = resumed.first?.header("range").flatMap { Int($0.dropFirst(6).prefix { $0 != "-" }) } ?? 0
                #expect(start > 0, "resumed from the kept bytes: \(String(describing: resumed.first?.header("range")))")
            }
        }
    }

    /// With one connection, after the first URI drops the transfer the next attempt starts at a mirror that ignores If-Range and sends no validator (another file of the same length): its answer is left unread and the validator's source resumes the kept bytes; nothing of the mirror is spliced in.
    @Test func singleStreamNeverResumesFromAnUnprovenMirror() async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                let primary = Self.url(origin, "/file/m.bin", seed: 307, ["drop": "\(300_000)", "dropTimes": "1"])
                let mirror = Self.url(other, "/file/m.bin", seed: 999, ["etag": "none", "lm": "0", "ifRange": "0"])
                try await Self.fetchVerified(primary, mirrors: [mirror], seed: 307, configuration: Self.splitting(split: 1, perServer: 1))
                #expect(other.requests(forKey: "/file/m.bin").count == 1, "the mirror was asked once")
                let resumed = origin.requests(forKey: "/file/m.bin").dropFirst()
                #expect(resumed.first?.status == 206, "the validator's source resumed: \(resumed.map(\.status))")
            }
        }
    }

    /// With one connection, a mirror whose file has the same bytes but another ETag answers the next attempt's If-Range with a 200: the kept bytes are not thrown away, the validator's source resumes them.
    @Test func failoverDoesNotThrowKeptBytesAway() async throws {
        try await withTestServer { origin in
            try await withTestServer { other in
                // Version 1 of seed 307 is the content of seed 308, under the ETag "s307-v1-…".
                other.changeContent(forKey: "m")
                let primary = Self.url(origin, "/file/m.bin", seed: 308, ["drop": "\(300_000)", "dropTimes": "1"])
                let mirror = Self.url(other, "/file/m.bin", seed: 307, ["key": "m"])
                try await Self.fetchVerified(primary, mirrors: [mirror], seed: 308, configuration: Self.splitting(split: 1, perServer: 1))
                let toMirror = other.requests(forKey: "m")
                #expect(toMirror.count == 1 && toMirror.first?.status == 200, "the mirror answered the If-Range with the whole file")
                let resumed = origin.requests(forKey: "/file/m.bin").dropFirst()
                #expect(resumed.first?.status == 206, "the validator's source resumed: \(resumed.map(\.status))")
                let start = resumed.first?.header("range").flatMap { Int($0.dropFirst(6).prefix { $0 != "-" }) } ?? 0
                #expect(start > 0)
            }
        }
    }

    /// `-x` counts per URI: with `-s 4 -x 2` and a mirror that refuses connections, the connections meant for the mirror do not pile onto the first URL; it never has more than 2 requests under way. (The server may still be writing the first, whole-file response for a moment after the client stopped reading it at its segment's end: at most one more. Segments of 256 KiB leave nothing to steal, so no other response is cut short.)
    @Test func connectionsPerServerAreCapped() async throws {
        try await withTestServer { origin in
            let primary = Self.url(origin, "/file/m.bin", seed: 309, ["rate": "\(1 << 20)"])
            // Held bound (connections refused) so that no other server of the run takes it.
            let reserved = try ReservedPort()
            defer { reserved.release() }
            let dead = URL(string: "http://127.0.0.1:\(reserved.port)/file/m.bin")!
            var configuration = Self.splitting(split: 4, perServer: 2)
            configuration.minSegmentSize = 256 << 10
            try await Self.fetchVerified(primary, mirrors: [dead], seed: 309, configuration: configuration)
            #expect(origin.peakConcurrentResponses(forKey: "/file/m.bin") <= 3)
            #expect(origin.requests(forKey: "/file/m.bin").count >= 2, "split over two connections")
        }
    }

    /// A server that answers 503 to extra connections while it delivers bytes on another is full, not failing: those connections wait and ask again, the URL is not given up, and the attempt completes without a retry (the mirror refusing connections meanwhile).
    @Test func fullServerIsWaitedForNotGivenUp() async throws {
        try await withTestServer { origin in
            let primary = Self.url(origin, "/file/m.bin", seed: 310, ["rate": "\(512 << 10)", "status": "200,503,503,503,503,503,200"])
            // Held bound (connections refused) so that no other server of the run takes it.
            let reserved = try ReservedPort()
            defer { reserved.release() }
            let dead = URL(string: "http://127.0.0.1:\(reserved.port)/file/m.bin")!
            var configuration = Self.splitting(split: 3, perServer: 3)
            configuration.retry = RetryPolicy(maxRetries: 0, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
            try await Self.fetchVerified(primary, mirrors: [dead], seed: 310, configuration: configuration)
            let statuses = origin.requests(forKey: "/file/m.bin").map(\.status)
            #expect(statuses.filter { $0 == 503 }.count == 5 && statuses.last == 206, "\(statuses)")
        }
    }

    /// When every URI fails the download fails (after its retries), with the last error.
    @Test func everyURIFailingFailsTheDownload() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let first = Self.url(server, "/file/a.bin", seed: 305, ["status": "503"])
            let second = Self.url(server, "/file/b.bin", seed: 305, ["status": "503"])
            let request = DownloadRequest(url: first, directory: dir, mirrors: [second])
            let info = try await Support.downloadOne(request, configuration: Support.fastConfiguration(retries: 2))
            #expect(info.state == .failed)
            #expect(info.error?.httpStatus == 503)
            #expect(server.requests(forKey: "/file/a.bin").count >= 2 && server.requests(forKey: "/file/b.bin").count >= 2)
        }
    }

    /// Mirrors are stored with the download and read back; rows written before mirrors existed read as none.
    @Test func mirrorsAreStored() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        var withMirrors = StoreTests.minimal(7)
        var request = withMirrors.kept.request
        request.mirrors = [URL(string: "https://mirror.example/a b/7.bin")!, URL(string: "http://u:p@other.example:81/7.bin")!]
        withMirrors.kept = KeptRequest(request)
        let plain = StoreTests.minimal(8)
        do {
            let store = try DownloadStore.open(directory: directory)
            try await store.save([withMirrors, plain])
        }
        let store = try DownloadStore.open(directory: directory)
        #expect(try await store.load(withMirrors.id)?.kept.request.mirrors == request.mirrors)
        #expect(try await store.load(plain.id)?.kept.request.mirrors == [])
        let column = try await store.writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT mirrors IS NULL FROM download WHERE id = ?", arguments: [Int64(bitPattern: plain.id.rawValue)])
        }
        #expect(column == true, "no mirrors: NULL")
    }
}
