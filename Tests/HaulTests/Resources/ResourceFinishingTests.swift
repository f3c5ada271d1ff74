import Crypto
import CryptoExtras
import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
@testable import Haul

/// The finishing step of a resource is owed until it ran: recorded before the group is
/// added, run by a supervisor when the group completes — also when it had completed before
/// the supervisor (a restarted daemon) came — and harmless to run again.
@Suite("Resource finishing", .timeLimit(.minutes(2)))
struct ResourceFinishingTests {
    @Test func completedGroupIsFinishedBySupervisorAndAgainHarmlessly() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let root = temporary.url
            let playlist = root.appendingPathComponent("local.m3u8")
            var text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
            for index in 0..<3 {
                text += "#EXTINF:1,\n\(server.url("/file/seg\(index)", ["size": "1000", "seed": "\(index)"]))\n"
            }
            text += "#EXT-X-ENDLIST\n"
            try text.write(to: playlist, atomically: true, encoding: .utf8)
            let out = root.appendingPathComponent("out", isDirectory: true)
            let state = root.appendingPathComponent("state", isDirectory: true)

            let manager = try await DownloadManager.open(stateDirectory: state, configuration: Support.fastConfiguration())
            let plan = try await manager.planResource(playlist.path, directory: out, hls: HLSOptions(join: true))
            #expect(plan.requests.map { $0.fileName ?? "" } == ["seg0.ts", "seg1.ts", "seg2.ts"])
            let book = ResourceBook(stateDirectory: state)
            let entry = ResourceBook.Entry(session: manager.session, group: "show", plan: plan)
            try book.save(entry)
            let summary = try await manager.addResource(plan, toGroup: "show").completion
            #expect(summary.succeeded)
            // The group is complete, and its step not run: as after a crash at that moment.
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("local.m3u8").path))

            let supervisor = ResourceSupervisor(book: book)
            await supervisor.supervise(entry, manager: manager)
            try await waitUntil("the supervisor to finish the resource") { book.entries().isEmpty }
            let local = try String(contentsOf: out.appendingPathComponent("local.m3u8"), encoding: .utf8)
            #expect(local == "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nseg0.ts\n#EXTINF:1,\nseg1.ts\n#EXTINF:1,\nseg2.ts\n#EXT-X-ENDLIST\n")
            let joined = try Data(contentsOf: out.appendingPathComponent("local.ts"))
            let parts = try (0..<3).map { try Data(contentsOf: out.appendingPathComponent("seg\($0).ts")) }
            #expect(joined == parts.reduce(Data(), +))

            // Run again (a crash between the step and clearing its record): the same files.
            try await manager.finishResource(plan)
            #expect(try String(contentsOf: out.appendingPathComponent("local.m3u8"), encoding: .utf8) == local)
            #expect(try Data(contentsOf: out.appendingPathComponent("local.ts")) == joined)
            #expect(Support.listing(out) == ["local.m3u8", "local.ts", "seg0.ts", "seg1.ts", "seg2.ts"])
            await manager.shutdown()
        }
    }

    /// AES-128 segments are decrypted for the joined file with the key from the directory.
    @Test func joinDecryptsAES128() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let key = [UInt8](repeating: 7, count: 16)
        let iv = HLSPlanner.sequenceIV(3)
        let plain = Data("an MPEG-TS segment, or so it says".utf8)
        let encrypted = try Self.encrypt(plain, key: key, iv: iv)
        try Data(key).write(to: directory.appendingPathComponent("k.key"))
        try encrypted.write(to: directory.appendingPathComponent("s.ts"))
        try SegmentJoiner.join(JoinSpec(output: "all.ts", parts: [JoinPart(file: "s.ts", keyFile: "k.key", iv: iv)]), in: directory)
        #expect(try Data(contentsOf: directory.appendingPathComponent("all.ts")) == plain)
        // A wrong key length is an error, and no joined file is left.
        try Data([1, 2, 3]).write(to: directory.appendingPathComponent("k.key"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("all.ts"))
        #expect(throws: HaulError.self) {
            try SegmentJoiner.join(JoinSpec(output: "all.ts", parts: [JoinPart(file: "s.ts", keyFile: "k.key", iv: iv)]), in: directory)
        }
        #expect(Support.listing(directory) == ["k.key", "s.ts"])
    }

    static func encrypt(_ data: Data, key: [UInt8], iv: [UInt8]) throws -> Data {
        try AES._CBC.encrypt(data, using: SymmetricKey(data: key), iv: AES._CBC.IV(ivBytes: iv))
    }
}
