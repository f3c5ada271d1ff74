import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import Testing

/// Issue 25, item 1, through the daemon's aria2 methods: a download directory that other local
/// users can write into. A link planted under a part file's predictable name, or put in place
/// of a download's directory after the daemon checked it, never leads a write outside.
@Suite(.timeLimit(.minutes(2))) struct DaemonSharedDirectoryTests {
    /// A symbolic link planted under the part file's name, pointing at a file outside the download directory, leaves that file untouched; the download is placed as a regular file.
    @Test func plantedPartLinkIsNotWrittenThrough() async throws {
        try await Aria2Fixture.run { f in
            let elsewhere = f.directory.deletingLastPathComponent().appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let victim = elsewhere.appendingPathComponent("precious.txt")
            try Data("keep me\n".utf8).write(to: victim)
            let url = f.url("planted.bin", size: 100_000, seed: 41)
            let request = DownloadRequest(url: URL(string: url)!, directory: f.directory, fileName: "planted.bin")
            let part = f.directory.appendingPathComponent(".haul-\(PartKey(for: request)).part")
            try FileManager.default.createSymbolicLink(atPath: part.path, withDestinationPath: victim.path)

            let gid = try await f.add(url, ["out": "planted.bin"])
            try await f.finished(gid)
            #expect(try await f.status(gid, ["status"]) == ["status": "complete"])
            #expect(FileManager.default.contents(atPath: victim.path) == Data("keep me\n".utf8), "written through the link")
            let placed = f.directory.appendingPathComponent("planted.bin")
            #expect(FileManager.default.contents(atPath: placed.path) == Data(TestContent.bytes(seed: 41, size: 100_000)))
            let kind = try FileManager.default.attributesOfItem(atPath: placed.path)[.type] as? FileAttributeType
            #expect(kind == .typeRegular)
            #expect(f.listing == ["planted.bin"])
        }
    }

    /// A download added paused into `dir=swap`, whose directory is then replaced by a link to a directory outside, fails when unpaused with a message that says so, and writes nothing outside.
    @Test func directorySwappedForALinkIsNotWrittenThrough() async throws {
        try await Aria2Fixture.run { f in
            let swap = f.directory.appendingPathComponent("swap")
            try FileManager.default.createDirectory(at: swap, withIntermediateDirectories: true)
            let outside = f.directory.deletingLastPathComponent().appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)

            let gid = try await f.add(f.url("swapped.bin", size: 50_000, seed: 42), ["dir": "swap", "pause": "true"])
            try FileManager.default.moveItem(at: swap, to: f.directory.appendingPathComponent("swap-was-here"))
            try FileManager.default.createSymbolicLink(atPath: swap.path, withDestinationPath: outside.path)

            #expect(try await f.client.result("aria2.unpause", [.string(gid)]) == .string(gid))
            try await f.finished(gid)
            let status = try await f.status(gid, ["status", "errorMessage"])
            #expect(status["status"] == "error")
            #expect(status["errorMessage"]?.stringValue?.contains("link") == true, "\(status)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty, "written outside the download directory")
        }
    }
}
