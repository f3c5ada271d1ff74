import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// Issue 25, item 3: a range is used only with the first answer's strong validator, from the
/// download's own URL as from a mirror. The server here changes the file after the first
/// answer, serves the new bytes without a strong ETag (none, or a weak one) and ignores
/// `If-Range`, as the careless servers of the issue's probe did: the download must end with
/// the new file whole, never with old and new bytes mixed.
@Suite("Strict validators end to end", .timeLimit(.minutes(2)))
struct StrictValidatorTests {
    /// The server's file after the change: `seed` + 1 (see `TestServer.bumpVersion`).
    static func changed(seed: UInt64, size: Int) -> [UInt8] {
        TestContent.bytes(seed: seed + 1, size: size)
    }

    /// A split download whose ranges come back with the changed file under no or a weak ETag starts over and ends with the new file whole.
    @Test(arguments: ["none", "weak"])
    func splitNeverMixesAChangedFile(changedETag: String) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 1 << 20
            let seed: UInt64 = 250
            let query = [
                "size": "\(size)", "seed": "\(seed)", "lm": "0", "ifRange": "0", "changeAfter": "1",
                "changedETag": changedETag, "rate": "\(2 << 20)",
            ]
            let request = Support.request(server, "/file/split-\(changedETag).bin", query, in: dir)
            let info = try await Support.downloadOne(request, configuration: SegmentedDownloadTests.configuration())
            #expect(info.state == .completed)
            let contents = Support.contents(dir.appendingPathComponent("split-\(changedETag).bin"))
            #expect(contents == Self.changed(seed: seed, size: size), "old and new bytes were mixed")
            #expect(Support.leftovers(dir).isEmpty)
            // Ranges were asked for (and answered 206 without the validator): the rule was tested.
            let ranged = server.requests(forKey: "/file/split-\(changedETag).bin").filter { $0.header("range") != nil }
            #expect(ranged.contains { $0.status == 206 })
        }
    }

    /// A resumed download whose range comes back with the changed file under no or a weak ETag fetches the file again from 0 and ends with the new file whole.
    @Test(arguments: ["none", "weak"])
    func resumeNeverAppendsAChangedFile(changedETag: String) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 200_000
            let seed: UInt64 = 260
            let query = [
                "size": "\(size)", "seed": "\(seed)", "lm": "0", "ifRange": "0", "changeAfter": "1",
                "changedETag": changedETag, "drop": "80000", "dropTimes": "1",
            ]
            let request = Support.request(server, "/file/resume-\(changedETag).bin", query, in: dir)
            let info = try await Support.downloadOne(request)
            #expect(info.state == .completed)
            let contents = Support.contents(dir.appendingPathComponent("resume-\(changedETag).bin"))
            #expect(contents == Self.changed(seed: seed, size: size), "old and new bytes were mixed")
            let requests = server.requests(forKey: "/file/resume-\(changedETag).bin")
            #expect(requests.count == 3, "first answer, the range that proves nothing, the whole new file")
            // The resume asks for the rest of what arrived: up to the 80,000 bytes sent before
            // the drop (an HTTP client may discard the body parts it had not yet handed on
            // when the connection ends, so a loaded run can resume from fewer).
            let resumedAt = requests.dropFirst().first.flatMap(SegmentedDownloadTests.rangeStart)
            #expect(resumedAt.map { (1...80_000).contains($0) } == true, "\(requests.map { $0.header("range") ?? "whole" })")
            #expect(requests.last?.header("range") == nil)
        }
    }
}
