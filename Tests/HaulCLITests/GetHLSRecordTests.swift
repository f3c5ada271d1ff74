import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get --hls-record` on a live playlist that grows with each reload (the test server's
/// `/live`, naming segments ffmpeg made and nginx serves) until it ends: every segment is
/// fetched once, a reload that fails is retried, and the local copy plays offline.
@Suite("haul get: recording live HLS", .timeLimit(.minutes(3)))
struct GetHLSRecordTests {
    @Test func recordsUntilTheEnd() async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        let nginx = try await NginxStatic.start()
        defer { nginx.remove() }
        try await FFmpegHLS.transportStream.generate(in: nginx.root)
        let source = nginx.root.appendingPathComponent("ts/index.m3u8")
        let segments = try Self.segments(of: source)
        #expect(segments.count == 6)
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                // Grows by one segment per reload, three listed at a time, the third reload a 503.
                let live = server.url("/live", [
                    "key": "rec", "segments": segments.map { "\($0.name):\($0.seconds)" }.joined(separator: ","),
                    "base": nginx.url("ts/"), "window": "3", "fail": "3",
                ])
                let result = try await HaulProcess.run(["get", "--hls", "--hls-record", "-d", "out", live], in: directory.url)
                await nginx.stop()
                #expect(result.status == 0, "stderr: \(result.stderr)")
                let reloads = server.requests(forKey: "rec")
                // The first load, the 503, and four reloads that grew (the last one with EXT-X-ENDLIST).
                #expect(reloads.count == 6, "\(reloads.map(\.status))")
                #expect(reloads.filter { $0.status == 503 }.count == 1)
                // Every segment fetched once.
                let fetched = nginx.accessLog().filter { $0.uri.hasPrefix("/ts/seg") }.map(\.uri)
                #expect(fetched.sorted() == segments.map { "/ts/" + $0.name }.sorted(), "\(fetched)")
                // The local playlist names each segment once, has ended, and plays offline as long as the source.
                let local = directory.file("out/live.m3u8")
                let text = try String(contentsOf: local, encoding: .utf8)
                #expect(text.hasSuffix("#EXT-X-ENDLIST\n"), "\(text)")
                let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
                #expect(uris == segments.map { Substring($0.name) }, "\(text)")
                #expect(try await FFmpegHLS.plays(local.path), "the recorded playlist does not play")
                let expected = try await FFmpegHLS.duration(of: source.path)
                let recorded = try await FFmpegHLS.duration(of: local.path)
                #expect(abs(recorded - expected) < 0.3, "recorded \(recorded) s, source \(expected) s")
            }
        }
    }

    /// `--hls-record-limit` stops a playlist that would go on: the local playlist ends at the
    /// limit, with the segments recorded so far.
    @Test func stopsAtTheLimit() async throws {
        try #require(FFmpegHLS.isInstalled, "ffmpeg is not installed; run scripts/test, which installs it")
        try await NginxStatic.serving { nginx in
            try await FFmpegHLS.transportStream.generate(in: nginx.root)
            let segments = try Self.segments(of: nginx.root.appendingPathComponent("ts/index.m3u8"))
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let live = server.url("/live", [
                        "key": "limit", "segments": segments.map { "\($0.name):\($0.seconds)" }.joined(separator: ","),
                        "base": nginx.url("ts/"),
                    ])
                    let result = try await HaulProcess.run(
                        ["get", "--hls", "--hls-record", "--hls-record-limit", "1.5s", "-d", "out", live], in: directory.url)
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(result.stderr.contains("stopped at the limit"), "\(result.stderr)")
                    let text = try String(contentsOf: directory.file("out/live.m3u8"), encoding: .utf8)
                    let uris = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
                    #expect(uris == segments.prefix(2).map { Substring($0.name) }, "\(text)")
                    #expect(text.hasSuffix("#EXT-X-ENDLIST\n"))
                    #expect(try await FFmpegHLS.plays(directory.file("out/live.m3u8").path))
                }
            }
        }
    }

    /// A stream that has just begun lists no segment on the first load: the run waits for
    /// the segments instead of completing an empty group.
    @Test func firstLoadWithoutSegments() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let live = server.url("/live", [
                    "key": "empty", "segments": "a.ts:1,b.ts:1", "base": server.url("/file/"), "start": "0",
                ])
                let result = try await HaulProcess.run(["get", "--hls", "--hls-record", "-d", "out", live], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                let text = try String(contentsOf: directory.file("out/live.m3u8"), encoding: .utf8)
                #expect(text.split(separator: "\n").filter { !$0.hasPrefix("#") } == ["a.ts", "b.ts"], "\(text)")
                #expect(FileManager.default.fileExists(atPath: directory.file("out/b.ts").path))
            }
        }
    }

    /// Without `--hls-record`, a live playlist is refused (exit 7), naming the option.
    @Test func refusedWithoutRecord() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let live = server.url("/live", ["key": "refused", "segments": "a.ts:1,b.ts:1", "base": server.url("/file/")])
                let result = try await HaulProcess.run(["get", "--hls", "-d", "out", live], in: directory.url)
                #expect(result.status == 7, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("--hls-record"), "\(result.stderr)")
            }
        }
    }

    /// The segments of ffmpeg's VOD playlist: file name and EXTINF duration text.
    static func segments(of playlist: URL) throws -> [(name: String, seconds: String)] {
        let lines = try String(contentsOf: playlist, encoding: .utf8).split(separator: "\n").map(String.init)
        var result: [(String, String)] = []
        var duration: String?
        for line in lines {
            if line.hasPrefix("#EXTINF:") {
                duration = String(line.dropFirst("#EXTINF:".count).split(separator: ",").first ?? "")
            } else if !line.hasPrefix("#"), let seconds = duration {
                result.append((line, seconds))
                duration = nil
            }
        }
        return result
    }
}
