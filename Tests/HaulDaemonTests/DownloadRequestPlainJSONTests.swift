import Foundation
@testable import Haul
@testable import HaulDaemon
import Testing

/// `DownloadRequest.plain` reads a request from parsed JSON only when `init(from:)` would
/// decode the very same request, and leaves everything else to it: held against the decoder
/// on thousands of requests made from every key's usual, unusual and wrong values.
@Suite(.timeLimit(.minutes(1))) struct DownloadRequestPlainJSONTests {
    /// For each key, values a client may send: those `plain` must read (absent as nil, null,
    /// the usual ones), and others (of another type, out of range, or with checks that are
    /// the decoder's), which it may leave to the decoder.
    static let candidates: [(key: String, read: [JSONValue?], other: [JSONValue?])] = [
        ("url", ["http://127.0.0.1:8080/f.bin", "HTTPS://example.com/a%20b?x=1"],
         ["ftp://example.com/f", "http://", "not a url", "file:///etc/passwd", 7, nil, .null]),
        ("directory", ["/srv/data", "/srv/da ta/", "file:///srv/data/", "relative/dir"], ["", 3, nil, .null]),
        ("priority", [nil, .null, 0, -5, 12], [.double(1.5), "3", true]),
        ("conflictPolicy", [nil, .null, "rename", "overwrite", "skip", "fail"], ["Rename", "", 1]),
        ("metadata", [nil, .null, [:], ["haul.cli.directory": "."], ["a": "b", "c": "d"]], [["n": 1], "x", []]),
        ("split", [nil, .null, 1, 4, 1024], [0, 1025, -1, .double(2.5), "4"]),
        ("maxBytesPerSecond", [nil, .null, 0, 1_000_000], [-1, .double(1.5), "10"]),
        ("headers", [nil, .null, []], [[["name": "X-A", "value": "1"]], [["name": "bad name", "value": "1"]], "h"]),
        ("checksums", [nil, .null, []],
         [[["algorithm": "sha256", "hex": .string(String(repeating: "ab", count: 32))]], [["algorithm": "crc", "hex": "00"]]]),
        ("mirrors", [nil, .null, []], [["http://mirror.example/f.bin"], ["ftp://mirror/f"], 5]),
        ("fileName", [nil, .null], ["name.bin", "../up", "", 4]),
        ("waitDeadline", [nil, .null], ["2026-12-01T18:00:00Z", "tomorrow"]),
        ("somethingNew", [nil, .null, "ignored", ["nested": true]], []),
    ]

    /// A request object with one candidate of each key: `choose(position, count)` picks the
    /// index among the key's values, `read` first, then `other`.
    static func request(_ choose: (_ position: Int, _ count: Int) -> Int) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for (position, candidate) in candidates.enumerated() {
            let values = candidate.read + candidate.other
            if let value = values[choose(position, values.count)] { object[candidate.key] = value }
        }
        return .object(object)
    }

    static func decoded(_ value: JSONValue) -> DownloadRequest? {
        try? JSONDecoder().decode(DownloadRequest.self, from: JSONRPCEncoding.encode(value))
    }

    /// A fixed sequence of pseudo-random numbers.
    struct Sequence {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    /// 2,000 requests of the values it must read: it reads each, as the decoder does.
    @Test func itReadsTheUsualRequestsAsTheDecoderDoes() {
        var random = Sequence()
        for _ in 0..<2000 {
            let value = Self.request { position, _ in random.next(Self.candidates[position].read.count) }
            #expect(DownloadRequest.plain(value) == Self.decoded(value), "\(value)")
            #expect(DownloadRequest.plain(value) != nil, "\(value)")
        }
    }

    /// 3,000 requests where any key may hold another value, and each other value beside
    /// otherwise usual keys: whenever `plain` reads one, the decoder reads the same.
    @Test func whatItReadsTheDecoderReadsAlike() {
        var random = Sequence()
        var requests: [JSONValue] = (0..<3000).map { _ in
            Self.request { position, count in
                let read = Self.candidates[position].read.count
                return random.next(10) == 0 ? random.next(count) : random.next(read)
            }
        }
        for (position, candidate) in Self.candidates.enumerated() {
            for index in candidate.other.indices {
                requests.append(Self.request { key, _ in key == position ? candidate.read.count + index : 0 })
            }
        }
        var left = 0
        for value in requests {
            guard let plain = DownloadRequest.plain(value) else {
                left += 1
                continue
            }
            #expect(plain == Self.decoded(value), "\(value)")
        }
        // The other values are left to the decoder, not read by a rule of their own.
        #expect(left > 1000)
    }

    /// What `haul get` and the benchmarks send, and a request a person writes by hand, are read
    /// here; a request with a file name or a deadline goes to the decoder.
    @Test func theUsualRequestsAreReadAndTheRestLeft() throws {
        let usual: [JSONValue] = [
            ["url": "http://127.0.0.1:8080/small/f0001.bin", "directory": "/srv/out"],
            [
                "url": "https://example.com/a.iso", "directory": "file:///srv/isos/", "headers": [], "checksums": [],
                "priority": 2, "conflictPolicy": "skip", "metadata": ["k": "v"], "split": 8, "maxBytesPerSecond": 0,
                "mirrors": [], "fileName": .null, "waitDeadline": .null,
            ],
        ]
        for value in usual {
            let plain = try #require(DownloadRequest.plain(value))
            #expect(plain == Self.decoded(value))
        }
        #expect(DownloadRequest.plain(["url": "http://h/f", "directory": "/d", "fileName": "f.bin"]) == nil)
        #expect(DownloadRequest.plain(["url": "http://h/f", "directory": "/d", "waitDeadline": "2026-12-01T18:00:00Z"]) == nil)
        #expect(DownloadRequest.plain(["directory": "/d"]) == nil)
        #expect(DownloadRequest.plain("http://h/f") == nil)
    }

    /// `decodedArray` with `plain` gives what the decoder gives for the whole array, elements
    /// read here and elements left to the decoder alike, and still names a refused element by
    /// its place in the whole array.
    @Test func aBatchOfBothKindsDecodesAsInOnePiece() async throws {
        var requests = RPCParametersSliceTests.requests(1500)
        requests[10] = ["url": "http://127.0.0.1:8080/named", "directory": "/srv/data", "fileName": "named.bin"]
        requests[900] = ["url": "http://127.0.0.1:8080/late", "directory": "/srv/data", "waitDeadline": "2026-12-01T18:00:00Z"]
        let parameters = RPCParameters(["app", "g", .array(requests)])
        let whole = try parameters.decoded(2, "requests", as: [DownloadRequest].self)
        let read = try await parameters.decodedArray(2, "requests", of: DownloadRequest.self, plain: DownloadRequest.plain)
        #expect(read == whole)
        let short = RPCParameters(["app", "g", .array(Array(requests[0..<20]))])
        #expect(try await short.decodedArray(2, "requests", of: DownloadRequest.self, plain: DownloadRequest.plain)
            == short.decoded(2, "requests", as: [DownloadRequest].self))

        requests[1234] = ["url": "http://127.0.0.1:8080/f", "directory": "/srv/data", "split": 0]
        do {
            _ = try await RPCParameters(["app", "g", .array(requests)])
                .decodedArray(2, "requests", of: DownloadRequest.self, plain: DownloadRequest.plain)
            Issue.record("a request with split 0 was decoded")
        } catch {
            #expect(error.message == "Invalid params: parameter 2 (requests): requests[1234].split must be from 1 to 1024, got 0")
        }
    }
}
