import Foundation
import Haul
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `haul.addResource` in a real `haul daemon`: an HLS playlist made by ffmpeg, served slowly by
/// nginx, added by a client that then goes away; the daemon is killed -9 half way, started
/// again, and finishes the resource itself.
@Suite(.timeLimit(.minutes(3))) struct DaemonResourceTests {
    static let secret = "resource-test-secret"

    /// After kill -9 and a restart, the daemon continues the segments, writes the local
    /// playlist and the joined file, both play with the server stopped, and the segments that
    /// were already here are not fetched again.
    @Test func killedDaemonFinishesTheResourceAfterRestart() async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        let server = try await NginxStatic.start(slowRate: "4k")
        defer { server.remove() }
        try await FFmpegHLS.transportStream.generate(in: server.root)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path("out"), withIntermediateDirectories: true)
        let arguments = [
            "--socket", directory.path("run/haul.sock"), "--state-dir", directory.path("state"),
            "--rpc-listen-port", "0", "--rpc-secret", Self.secret, "--dir", directory.path("out"), "--max-concurrent-downloads", "1",
        ]
        let show = directory.path("out/show")

        let first = try DaemonTestProcess(arguments)
        let (fields, lines) = try await first.waitForReady()
        let port = try #require(fields["tcp"].flatMap { Int($0.split(separator: ":").last ?? "") }, "not ready: \(lines)")
        struct Added: Decodable { let group: String; let entry: String?; let files: Int }
        struct Options: Encodable, Sendable { let directory: String; let join: Bool }
        let added = try await withRPCClient(endpoint: .tcp(port: port), secret: Self.secret) { client in
            try await client.call(
                "haul.addResource", "tv", "show", server.url("slow/ts/index.m3u8"), Options(directory: "show", join: true),
                returning: Added.self)
        }
        #expect(added.entry == "index.m3u8" && added.files == 6)
        // Killed once a segment is in place (about 5 s each at 4 KiB/s, room for a loaded
        // machine to react); the restarted daemon then gets the rest unthrottled.
        try await waitUntil("a segment placed", within: .seconds(60)) { Self.segments(in: show) >= 1 }
        first.send(SIGKILL)
        #expect(try await first.exit().signal == SIGKILL)
        #expect(Self.segments(in: show) < 6, "every segment was here before the kill")
        #expect(!FileManager.default.fileExists(atPath: show + "/index.m3u8"))

        try server.lift()
        let second = try DaemonTestProcess(arguments)
        _ = try await second.waitForReady()
        try await waitUntil("the local playlist and the joined file", within: .seconds(60)) {
            FileManager.default.fileExists(atPath: show + "/index.m3u8") && FileManager.default.fileExists(atPath: show + "/index.ts")
        }
        second.send(SIGTERM)
        #expect(try await second.exit().code == 0)
        await server.stop()
        #expect(try await FFmpegHLS.plays(show + "/index.m3u8"))
        #expect(try await FFmpegHLS.plays(show + "/index.ts"))
        let sizes = try (0..<6).map { index in
            try FileManager.default.attributesOfItem(atPath: server.root.appendingPathComponent("ts/seg\(index).ts").path)[.size] as! Int
        }
        let sent = server.accessLog().filter { $0.uri.hasPrefix("/slow/ts/seg") }.reduce(0) { $0 + $1.bytes }
        #expect(sent <= sizes.reduce(0, +) + sizes.max()!, "sent \(sent) bytes for \(sizes.reduce(0, +))")
        // The finishing step is no longer owed.
        let owed = (try? FileManager.default.contentsOfDirectory(atPath: directory.path("state/resources"))) ?? []
        #expect(owed.isEmpty, "\(owed)")
    }

    /// A playlist whose key is on another server is refused by the daemon with a clear error,
    /// and nothing is added.
    @Test func keyOnAnotherHostIsRefused() async throws {
        let server = try await NginxStatic.start()
        defer { server.remove() }
        try "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"http://192.0.2.1/k\"\n#EXTINF:1,\ns.ts\n#EXT-X-ENDLIST\n"
            .write(to: server.root.appendingPathComponent("k.m3u8"), atomically: true, encoding: .utf8)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path("out"), withIntermediateDirectories: true)
        let daemon = try DaemonTestProcess([
            "--socket", directory.path("run/haul.sock"), "--state-dir", directory.path("state"),
            "--rpc-listen-port", "0", "--rpc-secret", Self.secret, "--dir", directory.path("out"),
        ])
        let (fields, _) = try await daemon.waitForReady()
        let port = try #require(fields["tcp"].flatMap { Int($0.split(separator: ":").last ?? "") })
        await #expect(throws: HaulError.self) {
            try await withRPCClient(endpoint: .tcp(port: port), secret: Self.secret) { client in
                try await client.call("haul.addResource", "tv", "k", server.url("k.m3u8"), [String: String](), returning: [String: String].self)
            }
        }
        daemon.send(SIGTERM)
        #expect(try await daemon.exit().code == 0)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory.path("out"))) ?? []).isEmpty)
        await server.stop()
    }

    static func segments(in directory: String) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("seg") && $0.hasSuffix(".ts") }.count
    }
}
