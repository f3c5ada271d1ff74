import Foundation
import HaulTestSupport
import Testing

/// `haul add` with a playlist: the daemon plans it, downloads it as one group, and writes the
/// local master playlist and joined file itself; the client only prints the group's name.
@Suite("haul add: HLS", .timeLimit(.minutes(2)))
struct ClientResourceTests {
    /// A master playlist added with `haul add --join --hls-variant resolution=80x60` ends as a local
    /// copy of that variant with its audio rendition that plays with the server
    /// stopped, and `haul ls` lists its files in one group.
    @Test func addPlaylistToTheDaemon() async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        let server = try await NginxStatic.start()
        defer { server.remove() }
        try await FFmpegHLS.master.generate(in: server.root)
        try await withClientDaemon { daemon in
            let added = try await daemon.haul(["add", "--join", "--hls-variant", "resolution=80x60", "-d", "show", server.url("master/master.m3u8")])
            #expect(added.status == 0, "stderr: \(added.stderr)")
            let group = try #require(added.stdoutLines.first)
            #expect(group.hasPrefix("master.m3u8 "))
            let show = daemon.downloads.appendingPathComponent("show")
            try await waitUntil("the daemon to finish the resource (show/index.ts)", within: .seconds(60)) {
                FileManager.default.fileExists(atPath: show.appendingPathComponent("index.ts").path)
            }
            let listed = try await daemon.haul(["ls"])
            #expect(listed.status == 0)
            #expect(listed.stdout.contains("seg0.ts"), "\(listed.stdout)")
            await server.stop()
            let master = try String(contentsOf: show.appendingPathComponent("master.m3u8"), encoding: .utf8)
            #expect(master.contains("RESOLUTION=80x60") && !master.contains("RESOLUTION=160x120"), "\(master)")
            #expect(try await FFmpegHLS.plays(show.appendingPathComponent("master.m3u8").path))
            #expect(try await FFmpegHLS.plays(show.appendingPathComponent("index.ts").path))
        }
    }
}
