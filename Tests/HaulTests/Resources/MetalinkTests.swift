import Foundation
import Testing
@testable import Haul

@Suite("Metalink")
struct MetalinkTests {
    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink">
          <generator>test</generator>
          <file name="dir/data.bin">
            <size>10</size>
            <hash type="sha-256">\(String(repeating: "ab", count: 32))</hash>
            <hash type="sha-384">ignored</hash>
            <pieces length="4" type="sha-1">
              <hash>\(String(repeating: "01", count: 20))</hash>
              <hash>\(String(repeating: "02", count: 20))</hash>
              <hash>\(String(repeating: "03", count: 20))</hash>
            </pieces>
            <url priority="2">http://b.example/data.bin</url>
            <url priority="1">http://a.example/data.bin</url>
            <url>ftp://c.example/data.bin</url>
            <unknown><nested>x</nested></unknown>
          </file>
          <file name="plain.txt">
            <hash type="md5">\(String(repeating: "cd", count: 16))</hash>
            <url>https://a.example/plain.txt</url>
          </file>
        </metalink>
        """

    /// Files with their mirrors in priority order, hashes, and piece hashes; unknown elements
    /// and hash types are skipped; a file with pieces is staged under a hidden name.
    @Test func parsesAndPlans() throws {
        let parsed = try MetalinkParser.parse(Data(Self.document.utf8))
        #expect(parsed.files.count == 2)
        #expect(parsed.files[0].size == 10)
        #expect(parsed.files[0].urlsByPriority == ["http://a.example/data.bin", "http://b.example/data.bin", "ftp://c.example/data.bin"])
        #expect(parsed.files[0].hashes.map(\.algorithm) == [.sha256])
        #expect(parsed.files[0].pieces?.hashes.count == 3)
        let directory = URL(fileURLWithPath: "/tmp/meta", isDirectory: true)
        let plan = try MetalinkPlanner.plan(parsed, source: "x.meta4", directory: directory)
        #expect(plan.requests[0].url.absoluteString == "http://a.example/data.bin")
        #expect(plan.requests[0].mirrors.map(\.absoluteString) == ["http://b.example/data.bin"])
        #expect(plan.requests[0].directory.path == "/tmp/meta/dir")
        #expect(plan.requests[0].fileName == ".data.bin.unverified")
        #expect(plan.requests[0].checksums.isEmpty)
        #expect(plan.pieceChecks.map(\.name) == ["data.bin"])
        #expect(plan.requests[1].fileName == "plain.txt")
        #expect(plan.requests[1].checksums.map(\.algorithm) == [.md5])
        #expect(plan.entryName == "dir/data.bin")
    }

    /// Names that lead out of the directory are refused.
    @Test(arguments: ["../evil", "/etc/passwd", "a/../../b", "a//b", ".haul-x.part", "a\\b", "./a"])
    func hostileNames(name: String) throws {
        let text = Self.document.replacingOccurrences(of: "name=\"plain.txt\"", with: "name=\"\(name)\"")
        let parsed = try MetalinkParser.parse(Data(text.utf8))
        #expect(throws: HaulError.self) {
            try MetalinkPlanner.plan(parsed, source: "x.meta4", directory: URL(fileURLWithPath: "/tmp/meta"))
        }
    }

    /// XML bombs, external entities, deep nesting, other roots and broken XML are refused.
    @Test(arguments: [
        """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a"><url>http://a/&lol2;</url></file></metalink>
        """,
        """
        <?xml version="1.0"?>
        <!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a"><url>http://a/&x;</url></file></metalink>
        """,
        "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">" + String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100) + "</metalink>",
        "<metalink xmlns=\"urn:example:other\"><file name=\"a\"><url>http://a/</url></file></metalink>",
        "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\"><url>http://a/</url></file>",
        "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"></metalink>",
        "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\"><size>-1</size></file></metalink>",
    ])
    func hostileDocuments(text: String) {
        #expect(throws: HaulError.self) { try MetalinkParser.parse(Data(text.utf8)) }
    }

    /// A file whose only URLs are not http(s) cannot be planned.
    @Test func noUsableURL() throws {
        let text = "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\"><url>file:///etc/passwd</url><url>ftp://x/a</url></file></metalink>"
        let parsed = try MetalinkParser.parse(Data(text.utf8))
        #expect(throws: HaulError.self) { try MetalinkPlanner.plan(parsed, source: "x", directory: URL(fileURLWithPath: "/tmp/m")) }
    }
}
