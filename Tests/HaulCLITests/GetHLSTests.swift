import Foundation
import HaulTestSupport
import Testing

/// `haul get` on HLS that ffmpeg made and nginx serves: the local copy and the joined file play
/// offline with the source's duration, a run killed -9 half way continues, and a playlist is
/// recognised by its content type.
@Suite("haul get: HLS", .timeLimit(.minutes(4)))
struct GetHLSTests {
    /// Each shape of HLS (TS, fMP4, byte ranges, AES-128, master with an audio rendition) is
    /// downloaded into one directory whose local playlist, and joined file, play with the
    /// server stopped and last as long as the source.
    @Test(arguments: FFmpegHLS.allCases)
    func playsOffline(shape: FFmpegHLS) async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        let server = try await NginxStatic.start()
        defer { server.remove() }
        try await withTemporaryDirectory { directory in
            try await shape.generate(in: server.root)
            let result = try await HaulProcess.run(["get", "--join", "-d", "out", server.url(shape.entry)], in: directory.url)
            await server.stop()
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let out = directory.file("out")
            let entry = shape == .master ? "master.m3u8" : "index.m3u8"
            let options = shape.inputOptions
            let source = try await FFmpegHLS.duration(of: server.root.appendingPathComponent(shape.entry).path, options: options)
            #expect(try await FFmpegHLS.plays(out.appendingPathComponent(entry).path, options: options), "the local playlist does not play")
            let local = try await FFmpegHLS.duration(of: out.appendingPathComponent(entry).path, options: options)
            #expect(abs(local - source) < 0.3, "local \(local) s, source \(source) s")
            let joined = shape == .fragmentedMP4 ? "index.mp4" : "index.ts"
            #expect(try await FFmpegHLS.plays(out.appendingPathComponent(joined).path), "the joined file does not play")
            let joinedDuration = try await FFmpegHLS.duration(of: out.appendingPathComponent(joined).path)
            #expect(abs(joinedDuration - source) < 0.5, "joined \(joinedDuration) s, source \(source) s")
            // Everything is in the chosen directory, and no temporary or part file is left.
            #expect(directory.names() == ["out"])
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") }
            #expect(leftovers.isEmpty, "\(leftovers)")
            if shape == .master {
                // The chosen variant is the highest bandwidth (v0), with the audio rendition (v2).
                let master = try String(contentsOf: out.appendingPathComponent("master.m3u8"), encoding: .utf8)
                #expect(master.contains("BANDWIDTH=405900") && !master.contains("BANDWIDTH=185900"), "\(master)")
                #expect(server.accessLog().contains { $0.uri.hasPrefix("/master/v2/seg") })
                #expect(!server.accessLog().contains { $0.uri.hasPrefix("/master/v1/seg") })
            }
        }
    }

    /// A run killed -9 part way, run again, ends with a playable copy, and fetches again at
    /// most the segment that was in flight.
    @Test func killedHalfWayContinues() async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        let server = try await NginxStatic.start(slowRate: "4k")
        defer { server.remove() }
        try await withTemporaryDirectory { directory in
            try await FFmpegHLS.transportStream.generate(in: server.root)
            let arguments = ["get", "--json", "-j", "1", "--checkpoint-bytes", "4096", "-d", "out", server.url("slow/ts/index.m3u8")]
            let first = try HaulProcess(arguments, in: directory.url)
            // Killed once the first segment is in place (with -j 1, the second is in flight): at
            // 4 KiB/s each 24 KB segment takes about 5 s, room for a loaded machine to react
            // (at 12 KiB/s a CI run once saw all six fetched first); the rerun goes unthrottled.
            let firstDone = await first.stdout.firstLine { (try? JSONEventLine.decode($0))?.event == "completed" }
            try #require(firstDone != nil)
            first.send(SIGKILL)
            let killed = await first.result()
            #expect(killed.signaled && killed.status == SIGKILL)
            let segmentsBefore = server.accessLog().filter { $0.uri.hasPrefix("/slow/ts/seg") }
            #expect(segmentsBefore.count < 6, "the first run fetched every segment before it was killed")

            try server.lift()
            let rerun = try await HaulProcess.run(arguments, in: directory.url)
            #expect(rerun.status == 0, "stderr: \(rerun.stderr)")
            await server.stop()
            #expect(try await FFmpegHLS.plays(directory.file("out/index.m3u8").path))
            let segments = server.accessLog().filter { $0.uri.hasPrefix("/slow/ts/seg") }
            let sizes = try (0..<6).map { index in
                try FileManager.default.attributesOfItem(atPath: server.root.appendingPathComponent("ts/seg\(index).ts").path)[.size] as! Int
            }
            let sent = segments.reduce(0) { $0 + $1.bytes }
            // Every segment once, plus at most the one in flight when the run was killed.
            #expect(sent <= sizes.reduce(0, +) + sizes.max()!, "sent \(sent) bytes for \(sizes.reduce(0, +))")
            #expect(segments.count <= 7, "\(segments.map(\.uri))")
        }
    }

    /// A playlist URL without an extension is recognised by its content type
    /// (application/x-mpegURL) and downloaded as a playlist, not as a file.
    @Test func recognisedByContentType() async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        let server = try await NginxStatic.start()
        defer { server.remove() }
        try await withTemporaryDirectory { directory in
            try await FFmpegHLS.transportStream.generate(in: server.root)
            try FileManager.default.copyItem(
                at: server.root.appendingPathComponent("ts/index.m3u8"), to: server.root.appendingPathComponent("ts/stream"))
            let result = try await HaulProcess.run(["get", "-d", "out", server.url("typed/ts/stream")], in: directory.url)
            await server.stop()
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(try await FFmpegHLS.plays(directory.file("out/stream.m3u8").path))
            #expect(FileManager.default.fileExists(atPath: directory.file("out/seg5.ts").path))
        }
    }
}
