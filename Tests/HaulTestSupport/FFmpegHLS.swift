import Foundation

/// HLS made by ffmpeg itself, into a directory nginx serves: a 6-second test picture with a
/// sine tone, 1-second segments, in the five shapes the HLS tests cover. `scripts/test`
/// installs ffmpeg (which brings ffprobe) when missing.
public enum FFmpegHLS: String, CaseIterable, Sendable, CustomStringConvertible {
    /// MPEG-TS segments.
    case transportStream = "ts"
    /// fMP4 segments with an `EXT-X-MAP` initialization section.
    case fragmentedMP4 = "fmp4"
    /// One file, segments as `EXT-X-BYTERANGE`s (`-hls_flags single_file`).
    case byteRanges = "single"
    /// AES-128 encrypted segments (`-hls_key_info_file`).
    case encrypted = "aes"
    /// A master playlist with two video variants and an audio rendition (`-var_stream_map`).
    case master = "master"

    public var description: String { rawValue }

    /// The playlist to give `haul get`, relative to the served root.
    public var entry: String { self == .master ? "\(rawValue)/master.m3u8" : "\(rawValue)/index.m3u8" }

    public static let duration = 6

    /// Writes this shape into `root/<rawValue>/`.
    public func generate(in root: URL) async throws {
        let folder = root.appendingPathComponent(rawValue, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let input = [
            "-f", "lavfi", "-i", "testsrc=duration=\(Self.duration):size=160x120:rate=10",
            "-f", "lavfi", "-i", "sine=duration=\(Self.duration)",
        ]
        let codecs = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-c:a", "aac"]
        let hls = ["-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod"]
        var arguments: [String]
        switch self {
        case .transportStream:
            arguments = input + codecs + hls + ["-hls_segment_filename", "seg%d.ts", "index.m3u8"]
        case .fragmentedMP4:
            arguments = input + codecs + hls + [
                "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", "seg%d.m4s", "index.m3u8",
            ]
        case .byteRanges:
            arguments = input + codecs + hls + ["-hls_flags", "single_file", "index.m3u8"]
        case .encrypted:
            let key = (0..<16).map { _ in UInt8.random(in: 0...255) }
            try Data(key).write(to: folder.appendingPathComponent("enc.key"))
            try "enc.key\n\(folder.path)/enc.key\n".write(to: folder.appendingPathComponent("keyinfo"), atomically: true, encoding: .utf8)
            arguments = input + codecs + hls + ["-hls_key_info_file", "keyinfo", "-hls_segment_filename", "seg%d.ts", "index.m3u8"]
        case .master:
            arguments = input + [
                "-map", "0:v", "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "ultrafast", "-g", "10",
                "-b:v:0", "300k", "-b:v:1", "100k", "-s:v:1", "80x60", "-c:a", "aac",
            ] + hls + [
                "-var_stream_map", "v:0,agroup:aud v:1,agroup:aud a:0,agroup:aud", "-master_pl_name", "master.m3u8",
                "-hls_segment_filename", "v%v/seg%d.ts", "v%v/index.m3u8",
            ]
        }
        try await Self.run("ffmpeg", ["-v", "error", "-y"] + arguments, in: folder)
    }

    /// What ffmpeg needs to open this shape's playlist from a local disk: it refuses a key file
    /// (`.key`) of a local playlist unless told to accept any extension, for its own output too.
    public var inputOptions: [String] { self == .encrypted ? ["-allowed_extensions", "ALL"] : [] }

    /// `ffmpeg -i PATH -f null -`: decodes everything a player would; true when it succeeded.
    public static func plays(_ path: String, options: [String] = []) async throws -> Bool {
        do {
            try await run("ffmpeg", ["-v", "error"] + options + ["-i", path, "-f", "null", "-"], in: nil)
            return true
        } catch {
            return false
        }
    }

    /// The duration ffprobe reports, in seconds.
    public static func duration(of path: String, options: [String] = []) async throws -> Double {
        let output = try await run("ffprobe", ["-v", "error"] + options + ["-show_entries", "format=duration", "-of", "csv=p=0", path], in: nil)
        guard let value = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw NginxError("ffprobe gave no duration for \(path): \(output)")
        }
        return value
    }

    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") && FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe")
    }

    @discardableResult
    public static func run(_ tool: String, _ arguments: [String], in directory: URL?) async throws -> String {
        let process = try ChildProcess(executable: "/usr/bin/\(tool)", arguments: arguments, directory: directory?.path)
        let termination = process.terminationTask()
        async let output = collect(process.stdout)
        async let errors = collect(process.stderr)
        let (text, errorText) = await (output, errors)
        let status = await termination.value
        guard ChildProcess.exitCode(status) == 0 else {
            throw NginxError("\(tool) \(arguments.joined(separator: " ")) failed (\(status)): \(errorText)")
        }
        return text
    }

    private static func collect(_ chunks: AsyncStream<Data>) async -> String {
        var data = Data()
        for await chunk in chunks { data.append(chunk) }
        return String(decoding: data, as: UTF8.self)
    }
}
