import Foundation
@testable import Haul
import Testing

/// Values decoded from JSON are checked as values built in code are: what `Checksum(_:hex:)`,
/// `HeaderField(parsing:)`, `add` and the session's limits refuse, a decoder refuses too.
@Suite struct DecodingValidationTests {
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    /// Whether decoding fails with a `DecodingError` whose description mentions `why`.
    static func refuses<T: Decodable>(_ type: T.Type, _ json: String, _ why: String) -> Bool {
        do {
            _ = try decode(type, json)
            return false
        } catch let error as DecodingError {
            guard case .dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains(why)
        } catch {
            return false
        }
    }

    static let request = DownloadRequest(
        url: URL(string: "https://example.com/a.iso")!, directory: URL(fileURLWithPath: "/tmp"), fileName: "a.iso",
        headers: [HeaderField(name: "Authorization", value: "Bearer x")],
        checksums: [try! Checksum(.sha256, hex: String(repeating: "AB", count: 32))], split: 4, maxBytesPerSecond: 1024)

    /// The JSON of `request` with `key` replaced by `value` (raw JSON).
    static func requestJSON(_ key: String, _ value: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any])
        object[key] = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// A checksum's digest must have its algorithm's length and only hex digits; a good one is
    /// kept in lower case, and the encoded form decodes to the same value.
    @Test func checksum() throws {
        #expect(Self.refuses(Checksum.self, #"{"algorithm":"sha256","hex":"abc"}"#, "64 hex digits"))
        #expect(Self.refuses(Checksum.self, #"{"algorithm":"md5","hex":"zz\#(String(repeating: "0", count: 30))"}"#, "32 hex digits"))
        #expect(throws: DecodingError.self) { try Self.decode(Checksum.self, #"{"algorithm":"crc99","hex":"00"}"#) }
        let good = try Self.decode(Checksum.self, #"{"algorithm":"md5","hex":"\#(String(repeating: "AB", count: 16))"}"#)
        #expect(good.hex == String(repeating: "ab", count: 16))
        #expect(try Self.decode(Checksum.self, String(decoding: JSONEncoder().encode(good), as: UTF8.self)) == good)
    }

    /// A header's name must be a token and its value one line.
    @Test func headerField() throws {
        #expect(Self.refuses(HeaderField.self, #"{"name":"","value":"x"}"#, "not a valid header name"))
        #expect(Self.refuses(HeaderField.self, #"{"name":"X Y","value":"x"}"#, "not a valid header name"))
        #expect(Self.refuses(HeaderField.self, #"{"name":"X-A","value":"x\r\nHost: evil"}"#, "line break"))
        #expect(try Self.decode(HeaderField.self, #"{"name":"X-A","value":"b c"}"#) == HeaderField(name: "X-A", value: "b c"))
    }

    /// A request round-trips; a URL that is not http(s) with a host, an unsafe file name, a
    /// split outside 1…1024, a negative speed limit, and a bad checksum or header inside it
    /// are refused.
    @Test func downloadRequest() throws {
        let encoded = String(decoding: try JSONEncoder().encode(Self.request), as: UTF8.self)
        #expect(try Self.decode(DownloadRequest.self, encoded) == Self.request)
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("url", #""file:///etc/passwd""#), "http or https"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("url", #""ftp://example.com/a""#), "http or https"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("url", #""http:///a""#), "http or https"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("fileName", #""../x""#), "must not contain '/'"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("fileName", #"".haul-x.part""#), "reserved"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("split", "0"), "from 1 to 1024"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("split", "1025"), "from 1 to 1024"))
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("maxBytesPerSecond", "-1"), "0 or more"))
        #expect(Self.refuses(
            DownloadRequest.self, try Self.requestJSON("checksums", #"[{"algorithm":"sha1","hex":"00"}]"#), "40 hex digits"))
        #expect(Self.refuses(
            DownloadRequest.self, try Self.requestJSON("headers", #"[{"name":"A","value":"\n"}]"#), "line break"))
        var plain = Self.request
        plain.split = nil
        plain.maxBytesPerSecond = nil
        plain.fileName = nil
        let plainJSON = String(decoding: try JSONEncoder().encode(plain), as: UTF8.self)
        #expect(try Self.decode(DownloadRequest.self, plainJSON) == plain)
    }

    /// A request needs only its URL and directory (a file URL or an absolute path): every other
    /// key, absent or null, takes the initialiser's default; an unknown key is ignored.
    @Test func requestDefaults() throws {
        let url = URL(string: "https://example.com/a.iso")!
        let minimal = try Self.decode(DownloadRequest.self, #"{"url":"https://example.com/a.iso","directory":"/srv/data","extra":1}"#)
        #expect(minimal == DownloadRequest(url: url, directory: URL(fileURLWithPath: "/srv/data", isDirectory: true)))
        let nulls = try Self.decode(DownloadRequest.self, """
            {"url":"https://example.com/a.iso","directory":"file:///srv/data/","fileName":null,"headers":null,"checksums":null,
             "priority":null,"conflictPolicy":null,"metadata":null,"split":null,"maxBytesPerSecond":null,"mirrors":null,"waitDeadline":null}
            """)
        #expect(nulls == DownloadRequest(url: url, directory: URL(string: "file:///srv/data/")!))
        let some = try Self.decode(
            DownloadRequest.self, #"{"url":"https://example.com/a.iso","directory":"/srv","priority":3,"conflictPolicy":"skip"}"#)
        #expect(some.priority == 3 && some.conflictPolicy == .skip && some.headers.isEmpty)
        #expect(Self.refuses(DownloadRequest.self, try Self.requestJSON("conflictPolicy", #""replace""#), #"one of "rename", "overwrite""#))
        #expect(Self.refuses(
            Checksum.self, #"{"algorithm":"crc99","hex":"00"}"#, #"must be one of "md5", "sha1", "sha256", "sha512", got "crc99""#))
        let aria2Name = try Self.decode(Checksum.self, #"{"algorithm":"SHA-1","hex":"\#(String(repeating: "0", count: 40))"}"#)
        #expect(aria2Name.algorithm == .sha1)
    }

    /// Settings may leave out any key: `{}` is the default settings.
    @Test func settingsDefaults() throws {
        #expect(try Self.decode(SessionSettings.self, "{}") == SessionSettings())
        #expect(try Self.decode(SessionSettings.self, #"{"maxConcurrentDownloads":16}"#) == SessionSettings(maxConcurrentDownloads: 16))
        #expect(try Self.decode(SessionSettings.self, #"{"groupOrder":"sequential","maxDownloadsPerHost":null}"#)
            == SessionSettings(groupOrder: .sequential))
        #expect(Self.refuses(SessionSettings.self, #"{"groupOrder":"fast"}"#, #"must be one of "interleaved", "sequential", got "fast""#))
    }

    /// Session settings allow at least one download at once, in all and per host.
    @Test func sessionSettings() throws {
        #expect(Self.refuses(SessionSettings.self, #"{"maxConcurrentDownloads":0,"groupOrder":"interleaved"}"#, "at least 1"))
        #expect(Self.refuses(
            SessionSettings.self, #"{"maxConcurrentDownloads":2,"maxDownloadsPerHost":0,"groupOrder":"sequential"}"#, "per host"))
        let settings = SessionSettings(maxConcurrentDownloads: 3, maxDownloadsPerHost: 1, groupOrder: .sequential)
        #expect(try Self.decode(SessionSettings.self, String(decoding: JSONEncoder().encode(settings), as: UTF8.self)) == settings)
    }

    /// The daemon's answers carry requests and checksums: a `RemoteDownload` with a bad
    /// verified checksum is refused as a whole.
    @Test func remoteDownloadCarriesTheChecks() throws {
        var info = DownloadInfo(id: DownloadID(rawValue: 0x1234_5678_9abc_def0), request: Self.request, group: nil)
        info.verifiedChecksums = [try Checksum(.md5, hex: String(repeating: "0", count: 32))]
        let good = String(decoding: try JSONEncoder().encode(RemoteDownload(info)), as: UTF8.self)
        #expect(try Self.decode(RemoteDownload.self, good).verifiedChecksums == info.verifiedChecksums)
        let bad = good.replacingOccurrences(of: String(repeating: "0", count: 32), with: "0")
        #expect(Self.refuses(RemoteDownload.self, bad, "32 hex digits"))
    }
}
