import Foundation
import NIOCore
import Crypto
import HaulTestSupport
import Testing
@testable import Haul

@Suite("File names")
struct FileNamingTests {
    /// Hostile server names are reduced to one safe component inside the directory.
    @Test(arguments: [
        ("../../etc/passwd", "passwd"),
        ("/etc/passwd", "passwd"),
        ("..\\..\\win.ini", "win.ini"),
        ("a\u{0}b\u{7}c.txt", "abc.txt"),
        (".bashrc", "bashrc"),
        ("..", nil),
        ("   ", nil),
        ("/", nil),
        ("ok name.zip", "ok name.zip"),
    ] as [(String, String?)])
    func sanitize(raw: String, expected: String?) {
        #expect(FileNaming.sanitize(raw) == expected)
    }

    /// A plain ASCII name is taken as it is (no string rebuilt per file) only when the full
    /// sanitising would give it back unchanged: blanks, dots, separators, controls, DEL and
    /// lengths around the limit, and random printable ASCII, agree both ways.
    @Test func plainNamesAgreeWithTheFullSanitising() {
        var names = [
            "f0001.bin", "ok name.zip", " lead.txt", "trail.txt ", ".hidden", "..", "a/b", "a\\b", "tab\tname",
            "del\u{7F}", "caf\u{E9}.txt", "", " ", "x", "a.", "-dash", String(repeating: "a", count: 255),
            String(repeating: "a", count: 256), "evil\u{202E}txt.exe",
        ]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(" ./\\\tab~-_%\u{7F}")
        for _ in 0..<2_000 {
            let length = Int.random(in: 1...8, using: &generator)
            names.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for name in names {
            let full = FileNaming.sanitizedScalarByScalar(name)
            #expect(FileNaming.sanitize(name) == full, "\(name.debugDescription)")
            if FileNaming.isPlainName(name) { #expect(full == name, "\(name.debugDescription) is not plain") }
        }
        #expect(FileNaming.isPlainName("f0001.bin"))
        #expect(FileNaming.isPlainName("ok name.zip"))
    }

    /// Content-Disposition: filename* (RFC 8187) wins over filename, quoted values are unescaped.
    /// The URL's name is its path's last non-empty component, percent-decoded: the byte scan
    /// agrees with splitting the path on "/" for trailing, doubled and encoded slashes, a
    /// root, a query and names beyond ASCII.
    @Test(arguments: [
        "http://h/a/b/file.bin", "http://h/a/b/", "http://h/a//b//", "http://h/", "http://h",
        "http://h/dir%2Fname", "http://h/%2F", "http://h/x?y=/z", "http://h/caf%C3%A9/r%C3%A9sum%C3%A9.pdf",
        "http://h/日本/ファイル.txt", "http://h/a%20b/c%20d", "http://h///",
    ])
    func urlNameAgreesWithSplitting(_ text: String) throws {
        let url = try #require(URL(string: text))
        let split = url.path.split(separator: "/").last.map(String.init)
        #expect(FileNaming.urlName(url) == split)
    }

    @Test func contentDisposition() {
        #expect(FileNaming.contentDispositionName("attachment; filename=\"a \\\"b\\\".txt\"") == "a \"b\".txt")
        #expect(FileNaming.contentDispositionName("attachment; filename=plain.txt") == "plain.txt")
        #expect(FileNaming.contentDispositionName("attachment; filename=\"fallback.txt\"; filename*=UTF-8''na%C3%AFve.txt") == "naïve.txt")
        #expect(FileNaming.contentDispositionName("inline") == nil)
    }

    /// The final name prefers the user's, then the server's, then the URL's, then "download".
    @Test func resolveOrder() {
        let url = URL(string: "http://h/dir/file.bin?x=1")!
        #expect(FileNaming.resolveName(requested: "mine", contentDisposition: "attachment; filename=s.bin", originalURL: url, finalURL: nil) == "mine")
        #expect(FileNaming.resolveName(requested: nil, contentDisposition: "attachment; filename=\"../s.bin\"", originalURL: url, finalURL: nil) == "s.bin")
        #expect(FileNaming.resolveName(requested: nil, contentDisposition: "attachment; filename=\"..\"", originalURL: url, finalURL: nil) == "file.bin")
        #expect(FileNaming.resolveName(requested: nil, contentDisposition: nil, originalURL: URL(string: "http://h/")!, finalURL: nil) == "download")
    }

    /// User-chosen names are checked, never silently changed.
    @Test func userNames() {
        for bad in ["", ".", "..", "a/b", "x\u{1}", ".haul-x.part", String(repeating: "a", count: 300)] {
            #expect(throws: HaulError.self) { try FileNaming.validateUserFileName(bad) }
        }
        #expect(throws: Never.self) { try FileNaming.validateUserFileName("fine.txt") }
    }

    /// Issue 25: every bidirectional control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) is removed from a server's name, so that `evil\u{202E}txt.exe` cannot show as "evilexe.txt"; a user's name with one is refused, not changed.
    @Test func bidirectionalControls() {
        let controls: [UInt32] = [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C]
        for value in controls {
            let control = String(Character(Unicode.Scalar(value)!))
            #expect(FileNaming.sanitize("evil\(control)txt.exe") == "eviltxt.exe", "U+\(String(value, radix: 16))")
            #expect(throws: HaulError.self) { try FileNaming.validateUserFileName("evil\(control)txt.exe") }
        }
        let disposition = "attachment; filename*=UTF-8''evil%E2%80%AEtxt.exe"
        #expect(FileNaming.resolveName(
            requested: nil, contentDisposition: disposition, originalURL: URL(string: "http://h/f")!, finalURL: nil) == "eviltxt.exe")
        #expect(FileNaming.resolveName(
            requested: nil, contentDisposition: nil, originalURL: URL(string: "http://h/evil%E2%80%AEtxt.exe")!, finalURL: nil) == "eviltxt.exe")
    }

    /// Long names are cut to 255 bytes keeping the extension.
    @Test func longNames() {
        let long = String(repeating: "é", count: 200) + ".tar"
        let safe = FileNaming.sanitize(long)!
        #expect(safe.utf8.count <= 255)
        #expect(safe.hasSuffix(".tar"))
    }
}

@Suite("Placement")
struct PlacementTests {
    func write(_ text: String, _ path: String) { _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) }
    func read(_ path: String) -> String? { FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } }

    /// Numbered names keep the extension (and a .tar.* double extension).
    @Test func numberedNames() {
        #expect(Placement.numbered("report.pdf", 2) == "report (2).pdf")
        #expect(Placement.numbered("data.tar.gz", 1) == "data (1).tar.gz")
        #expect(Placement.numbered("README", 3) == "README (3)")
    }

    /// An open part file holding `text`, as a verified transfer hands it to placement.
    func part(_ text: String, _ key: String, in dir: String) throws -> PartFile {
        var part = PartFile(directory: dir, key: key)
        try part.open(truncatingTo: 0)
        try part.write(ByteBuffer(string: text))
        return part
    }

    /// A part file is made when missing (empty, written at 0); one already there, from an
    /// earlier attempt, is opened as it is and cut to the length asked; a link planted under
    /// its name is removed, its target never touched.
    @Test func partFilesMadeOrReopened() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.path
        var fresh = PartFile(directory: dir, key: "a1")
        #expect(try fresh.acquireTelling(creating: true, expectingNew: true) == .created)
        fresh.close()
        #expect(try fresh.acquireTelling(creating: true, expectingNew: true) == .opened)
        fresh.close()

        write("left by an earlier attempt", dir + "/.haul-a2.part")
        let kept = try part("new", "a2", in: dir)
        kept.handle?.close()
        #expect(read(dir + "/.haul-a2.part") == "new")

        write("the user's", dir + "/target.txt")
        try FileManager.default.createSymbolicLink(atPath: dir + "/.haul-a3.part", withDestinationPath: dir + "/target.txt")
        let planted = try part("mine", "a3", in: dir)
        planted.handle?.close()
        #expect(read(dir + "/target.txt") == "the user's")
        #expect(read(dir + "/.haul-a3.part") == "mine")
        #expect(try FileManager.default.attributesOfItem(atPath: dir + "/.haul-a3.part")[.type] as? FileAttributeType == .typeRegular)
    }

    /// Each conflict policy does what it says and never destroys the existing file unless told to overwrite.
    @Test func policies() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.path
        write("old", dir + "/f.txt")

        let renamed = try Placement.place(try part("new1", "p1", in: dir), name: "f.txt", policy: .rename)
        #expect(renamed.path == dir + "/f (1).txt")
        #expect(read(dir + "/f.txt") == "old")
        #expect(read(renamed.path) == "new1")

        let skipped = try Placement.place(try part("new2", "p2", in: dir), name: "f.txt", policy: .skip)
        #expect(skipped.skipped)
        #expect(read(dir + "/f.txt") == "old")
        #expect(!FileManager.default.fileExists(atPath: dir + "/.haul-p2.part"))

        let third = try part("new3", "p3", in: dir)
        #expect(throws: HaulError.self) { try Placement.place(third, name: "f.txt", policy: .fail) }
        #expect(read(dir + "/f.txt") == "old")

        let replaced = try Placement.place(third, name: "f.txt", policy: .overwrite)
        #expect(replaced.path == dir + "/f.txt")
        #expect(read(dir + "/f.txt") == "new3")
    }
}

@Suite("Checksums and IDs")
struct ChecksumTests {
    /// Checksums parse Haul's and aria2's spellings and reject wrong lengths and types.
    @Test func parsing() throws {
        let hex = String(repeating: "ab", count: 32)
        #expect(try Checksum(parsing: "sha256=\(hex)").algorithm == .sha256)
        #expect(try Checksum(parsing: "SHA-256=\(hex.uppercased())").hex == hex)
        #expect(throws: HaulError.self) { try Checksum(parsing: "sha256=abc") }
        #expect(throws: HaulError.self) { try Checksum(parsing: "crc32=\(hex)") }
        #expect(throws: HaulError.self) { try Checksum(parsing: hex) }
    }

    /// Streaming hashes match the known digests of "abc".
    @Test func streamingHasher() {
        var hasher = StreamingHasher(algorithms: [.md5, .sha1, .sha256, .sha512])
        Array("abc".utf8).withUnsafeBytes { hasher.update($0) }
        let digests = Dictionary(uniqueKeysWithValues: hasher.finalize().map { ($0.algorithm, $0.hex) })
        #expect(digests[.md5] == "900150983cd24fb0d6963f7d28e17f72")
        #expect(digests[.sha1] == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(digests[.sha256] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digests[.sha512]?.hasPrefix("ddaf35a193617aba") == true)
    }

    /// Download IDs are 16 hex characters and round-trip.
    @Test func downloadIDs() {
        let id = DownloadID(rawValue: 0xab)
        #expect(id.description == "00000000000000ab")
        #expect(DownloadID(id.description) == id)
        #expect(DownloadID("xyz") == nil)
    }
}

/// Part keys are the names of files on disk that a later process must find again.
@Suite struct PartKeyTests {
    /// A key reads back from its text, with and without an owner, and nothing else reads as one.
    @Test func roundTrip() throws {
        let request = DownloadRequest(url: URL(string: "https://example.com/a.bin")!, directory: URL(fileURLWithPath: "/tmp"))
        let key = PartKey(for: request)
        #expect(key.description.utf8.count == 16)
        #expect(PartKey(parsing: key.description) == key)
        let owned = key.owned(by: DownloadID(rawValue: 0xABC))
        #expect(owned.description == key.description + "-0000000000000abc")
        #expect(PartKey(parsing: owned.description) == owned)
        for bad in ["", "xyz", "0123456789abcdef-", "0123456789abcdef-12", "0123456789abcde", "0123456789abcdef-0000000000000abc-1"] {
            #expect(PartKey(parsing: bad) == nil)
        }
    }

    /// The key is the first eight bytes of SHA-256 of the URL and name, as earlier versions named part files.
    @Test func derivedFromURLAndName() {
        let request = DownloadRequest(url: URL(string: "http://h/x")!, directory: URL(fileURLWithPath: "/tmp"), fileName: "y")
        let digest = SHA256.hash(data: Data("http://h/x\ny".utf8))
        #expect(PartKey(for: request).description == digest.prefix(8).map { String(format: "%02x", $0) }.joined())
    }
}
