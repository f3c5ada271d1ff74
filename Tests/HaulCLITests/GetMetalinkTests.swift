import Crypto
import Foundation
import HaulTestSupport
import Testing

/// `haul get FILE.meta4` against two nginx mirrors, one of which serves a corrupted piece.
@Suite("haul get: Metalink", .timeLimit(.minutes(2)))
struct GetMetalinkTests {
    static let size = 1 << 20
    static let pieceLength = 256 << 10

    /// The file comes from the preferred mirror, whose third piece is corrupt: that piece
    /// fails its hash, is fetched again from the other mirror, and the file placed is exactly
    /// the original; a file without pieces is checked against its whole-file hash.
    @Test func corruptPieceIsRefetchedFromTheOtherMirror() async throws {
        try await NginxStatic.serving { server in
            try await withTemporaryDirectory { directory in
                let original = Checksums.content(seed: 27, size: Self.size)
                var corrupt = original
                for index in (2 * Self.pieceLength)..<(2 * Self.pieceLength + 100) { corrupt[index] ^= 0xFF }
                let small = Array("a small file without pieces\n".utf8)
                try Self.serve(["m1/data.bin": corrupt, "m2/data.bin": original, "m2/small.txt": small], root: server.root)
                let document = Self.document(server: server, original: original, small: small)
                try document.write(to: directory.file("files.meta4"), atomically: true, encoding: .utf8)

                let result = try await HaulProcess.run(["get", "-d", "out", "files.meta4"], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "out/data.bin").map(Checksums.sha256) == Checksums.sha256(original))
                #expect(directory.contents(of: "out/small.txt") == small)
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.file("out").path).sorted()
                #expect(names == ["data.bin", "small.txt"])
                let log = server.accessLog()
                #expect(log.contains { $0.uri == "/m1/data.bin" && $0.status == 200 })
                // The bad piece was asked again of each mirror in order; only the second served it right.
                #expect(log.contains { $0.uri == "/m2/data.bin" && $0.status == 206 && $0.bytes == Self.pieceLength })
                #expect(!log.contains { $0.uri == "/m2/data.bin" && $0.status == 200 })

                // Run again: the verified file is recognised and not fetched a second time.
                let again = try await HaulProcess.run(["get", "-d", "out", "files.meta4"], in: directory.url)
                #expect(again.status == 0, "stderr: \(again.stderr)")
                #expect(server.accessLog().filter { $0.uri.hasSuffix("/data.bin") }.count == log.filter { $0.uri.hasSuffix("/data.bin") }.count)
                #expect(directory.contents(of: "out/data.bin").map(Checksums.sha256) == Checksums.sha256(original))
            }
        }
    }

    /// When every mirror serves the piece corrupt, the file is not placed and the run fails
    /// with the checksum exit status.
    @Test func pieceNoMirrorServesRightIsNotPlaced() async throws {
        try await NginxStatic.serving { server in
            try await withTemporaryDirectory { directory in
                let original = Checksums.content(seed: 28, size: Self.size)
                var corrupt = original
                corrupt[Self.pieceLength + 5] ^= 0x01
                try Self.serve(["m1/data.bin": corrupt, "m2/data.bin": corrupt, "m2/small.txt": []], root: server.root)
                try Self.document(server: server, original: original, small: []).write(
                    to: directory.file("files.meta4"), atomically: true, encoding: .utf8)
                let result = try await HaulProcess.run(["get", "-d", "out", "files.meta4"], in: directory.url)
                #expect(result.status == 6, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("piece 1 of data.bin"))
                #expect(!FileManager.default.fileExists(atPath: directory.file("out/data.bin").path))
            }
        }
    }

    /// A document naming a file outside the directory is refused before anything is fetched.
    @Test func nameOutsideTheDirectoryIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let text = """
                <?xml version="1.0" encoding="UTF-8"?>
                <metalink xmlns="urn:ietf:params:xml:ns:metalink">
                  <file name="../escape.bin"><url>http://127.0.0.1:9/escape.bin</url></file>
                </metalink>
                """
            try text.write(to: directory.file("evil.meta4"), atomically: true, encoding: .utf8)
            let result = try await HaulProcess.run(["get", "-d", "out", "evil.meta4"], in: directory.url)
            #expect(result.status == 2, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("could lead outside the directory"))
            #expect(directory.names() == ["evil.meta4"])
        }
    }

    /// Puts files in the served root, every one with the same modification time, so that the
    /// two mirrors' copies of a file have the same ETag (nginx's is time and size).
    static func serve(_ files: [String: [UInt8]], root: URL) throws {
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        for (path, bytes) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            try FileManager.default.setAttributes([.modificationDate: time], ofItemAtPath: url.path)
        }
    }

    static func document(server: NginxStatic, original: [UInt8], small: [UInt8]) -> String {
        let pieces = stride(from: 0, to: original.count, by: pieceLength).map { start in
            "      <hash>\(Checksums.sha256(Array(original[start..<min(start + pieceLength, original.count)])))</hash>"
        }.joined(separator: "\n")
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="data.bin">
                <size>\(original.count)</size>
                <hash type="sha-256">\(Checksums.sha256(original))</hash>
                <pieces length="\(pieceLength)" type="sha-256">
            \(pieces)
                </pieces>
                <url priority="1">\(server.url("m1/data.bin"))</url>
                <url priority="2">\(server.url("m2/data.bin"))</url>
              </file>
              <file name="small.txt">
                <size>\(small.count)</size>
                <hash type="sha-256">\(Checksums.sha256(small))</hash>
                <url>\(server.url("m2/small.txt"))</url>
              </file>
            </metalink>
            """
    }
}
