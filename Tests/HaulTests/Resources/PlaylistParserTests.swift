import Foundation
import Testing
@testable import Haul

@Suite("HLS playlist parser")
struct PlaylistParserTests {
    static let media = """
        #EXTM3U
        #EXT-X-VERSION:4
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:7
        #EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0"
        #EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x000102030405060708090a0b0c0d0e0f
        #EXTINF:1.5,first
        #EXT-X-BYTERANGE:1000@720
        all.mp4
        #EXTINF:1.25,
        #EXT-X-BYTERANGE:500
        all.mp4
        #EXT-X-KEY:METHOD=NONE
        #EXTINF:2.0
        seg3.ts
        #EXT-X-ENDLIST

        """

    /// Segments carry their duration, sequence number, byte range (an implicit offset follows
    /// the previous range), the key and initialization section in force.
    @Test func mediaPlaylist() throws {
        guard case .media(let playlist) = try PlaylistParser.parse(Self.media) else { Issue.record("not media"); return }
        #expect(playlist.version == 4)
        #expect(playlist.targetDuration == 2)
        #expect(playlist.isComplete)
        #expect(playlist.segments.map(\.uri) == ["all.mp4", "all.mp4", "seg3.ts"])
        #expect(playlist.segments.map(\.sequence) == [7, 8, 9])
        #expect(playlist.segments[0].byteRange == ByteRange(length: 1000, offset: 720))
        #expect(playlist.segments[1].byteRange == ByteRange(length: 500, offset: 1720))
        #expect(playlist.segments[2].byteRange == nil)
        #expect(playlist.segments[0].key?.uri == "key.bin")
        #expect(playlist.segments[0].key?.iv == Array(0..<16))
        #expect(playlist.segments[1].key?.uri == "key.bin")
        #expect(playlist.segments[2].key == nil)
        #expect(playlist.segments[0].map == MediaInitialization(uri: "init.mp4", line: 5, byteRange: ByteRange(length: 720, offset: 0)))
        #expect(abs(playlist.duration - 4.75) < 1e-9)
    }

    /// A master playlist's variants (bandwidth, resolution, codecs) and renditions by group.
    @Test func masterPlaylist() throws {
        let text = """
            #EXTM3U
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",URI="subs/en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="other",NAME="Other",URI="other.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"
            low/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2400000,AVERAGE-BANDWIDTH=2000000,RESOLUTION=1280x720,AUDIO="aud"
            high/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8"
            """
        guard case .master(let master) = try PlaylistParser.parse(text) else { Issue.record("not master"); return }
        #expect(master.independentSegments)
        #expect(master.variants.map(\.bandwidth) == [800_000, 2_400_000])
        #expect(master.variants[0].resolution == Resolution(width: 640, height: 360))
        #expect(master.variants[0].codecs == "avc1.4d401e,mp4a.40.2")
        #expect(master.variants[1].averageBandwidth == 2_000_000)
        #expect(master.renditions(of: master.variants[0]).map(\.name) == ["English", "English"])
        #expect(master.renditions(of: master.variants[1]).map(\.uri) == ["audio/en.m3u8"])
        #expect(try VariantChoice.highest.select(from: master.variants).uri == "high/index.m3u8")
        #expect(try VariantChoice.lowest.select(from: master.variants).uri == "low/index.m3u8")
        #expect(try VariantChoice(parsing: "index=0").select(from: master.variants).uri == "low/index.m3u8")
        #expect(try VariantChoice(parsing: "bandwidth=1000000").select(from: master.variants).uri == "low/index.m3u8")
        #expect(try VariantChoice(parsing: "resolution=1280x720").select(from: master.variants).uri == "high/index.m3u8")
        #expect(throws: HaulError.self) { try VariantChoice(parsing: "resolution=1920x1080").select(from: master.variants) }
        #expect(throws: HaulError.self) { try VariantChoice(parsing: "index=2").select(from: master.variants) }
    }

    /// Malformed tags and attributes are errors that name the line, never guesses.
    @Test(arguments: [
        "#EXTM3U\n#EXTINF:abc,\nseg.ts\n#EXT-X-ENDLIST",
        "#EXTM3U\nseg.ts\n#EXT-X-ENDLIST",
        "#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:100\nseg.ts\n#EXT-X-ENDLIST",
        "#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:-5@0\nseg.ts",
        "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x1234\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://x\"\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",KEYFORMAT=\"com.widevine\"\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-MAP:URI=init.mp4\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\nv.m3u8",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,BANDWIDTH=2\nv.m3u8",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=12,RESOLUTION=big\nv.m3u8",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXTINF:1,\nseg.ts",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1",
        "#EXTM3U\n#EXT-X-DEFINE:NAME=\"x\",VALUE=\"y\"",
        "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,NAME=\"a\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8",
        "not a playlist\nseg.ts",
        "",
    ])
    func malformed(text: String) {
        #expect(throws: HaulError.self) { try PlaylistParser.parse(text) }
    }

    /// A million segments stop at the limit (100,000) with an error, before anything is
    /// planned; a document over 16 MiB is refused before it is read.
    @Test func segmentLimit() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + String(repeating: "#EXTINF:1,\na\n", count: 1_000_000) + "#EXT-X-ENDLIST\n"
        #expect(text.utf8.count < ResourceLimits().maxDocumentBytes)
        do {
            _ = try PlaylistParser.parse(text)
            Issue.record("a million segments were accepted")
        } catch {
            #expect(error.message.contains("more than 100000 segments"), "\(error.message)")
        }
        let oversized = Data(repeating: 0x41, count: ResourceLimits().maxDocumentBytes + 1)
        #expect(throws: HaulError.self) { try PlaylistParser.parse(oversized) }
    }

    /// Lines end with LF, CRLF or CR; a byte-order mark is skipped.
    @Test func lineEndings() throws {
        let text = "\u{FEFF}#EXTM3U\r\n#EXTINF:1,\ra.ts\n#EXTINF:2,\r\nb.ts\r\n#EXT-X-ENDLIST"
        guard case .media(let playlist) = try PlaylistParser.parse(text) else { Issue.record("not media"); return }
        #expect(playlist.segments.map(\.uri) == ["a.ts", "b.ts"])
        #expect(playlist.isComplete)
    }

    /// The IV of a segment without one is its sequence number, big-endian.
    @Test func sequenceIV() {
        #expect(HLSPlanner.sequenceIV(0x0102) == [UInt8](repeating: 0, count: 14) + [1, 2])
    }
}
