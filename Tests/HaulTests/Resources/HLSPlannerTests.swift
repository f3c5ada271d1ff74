import Foundation
import Testing
@testable import Haul

@Suite("HLS planner")
struct HLSPlannerTests {
    static let base = "http://127.0.0.1:8080/show/"

    /// A master playlist becomes the chosen variant's segments, its audio rendition's, their
    /// keys and initialization sections, one download per file, and local playlists whose URIs
    /// are the local names.
    @Test func masterWithRendition() async throws {
        let documents = CannedDocuments(documents: [
            Self.base + "master.m3u8": """
                #EXTM3U
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="audio/index.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=100000,AUDIO="a"
                low/index.m3u8
                #EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=320x240,AUDIO="a"
                high/index.m3u8
                """,
            Self.base + "high/index.m3u8": """
                #EXTM3U
                #EXT-X-TARGETDURATION:1
                #EXT-X-MAP:URI="init.mp4"
                #EXT-X-KEY:METHOD=AES-128,URI="/keys/k1"
                #EXTINF:1,
                seg0.m4s
                #EXTINF:1,
                seg1.m4s
                #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg2.m4s"
                #EXT-X-ENDLIST
                """,
            Self.base + "audio/index.m3u8": """
                #EXTM3U
                #EXT-X-TARGETDURATION:1
                #EXT-X-MAP:URI="init.mp4"
                #EXTINF:1,
                seg0.m4s
                #EXT-X-ENDLIST
                """,
        ])
        let plan = try await documents.plan(Self.base + "master.m3u8", options: HLSOptions(join: true))
        #expect(plan.entryName == "master.m3u8")
        #expect(plan.requests.map(\.url.absoluteString) == [
            Self.base + "high/init.mp4", "http://127.0.0.1:8080/keys/k1", Self.base + "high/seg0.m4s", Self.base + "high/seg1.m4s",
            Self.base + "audio/init.mp4", Self.base + "audio/seg0.m4s",
        ])
        #expect(plan.requests.map { $0.fileName ?? "" } == ["init.mp4", "k1.key", "seg0.m4s", "seg1.m4s", "init-2.mp4", "seg0-2.m4s"])
        #expect(plan.requests.allSatisfy { $0.directory.path == "/tmp/resource" && $0.conflictPolicy == .overwrite })
        let files = Dictionary(uniqueKeysWithValues: plan.localFiles.map { ($0.name, $0.text) })
        #expect(files["master.m3u8"] == """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="index-2.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=320x240,AUDIO="a"
            index.m3u8

            """)
        #expect(files["index.m3u8"] == """
            #EXTM3U
            #EXT-X-TARGETDURATION:1
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="k1.key"
            #EXTINF:1,
            seg0.m4s
            #EXTINF:1,
            seg1.m4s
            #EXT-X-ENDLIST

            """)
        #expect(plan.joins.map(\.output) == ["index.mp4", "index-2.mp4"])
        #expect(plan.joins[0].parts.map(\.file) == ["init.mp4", "seg0.m4s", "seg1.m4s"])
        #expect(plan.joins[0].parts[1].keyFile == "k1.key")
        #expect(plan.joins[0].parts[2].iv == HLSPlanner.sequenceIV(1))
    }

    /// Byte ranges of one file are one download of that file; the local playlist keeps the ranges.
    @Test func byteRangesShareOneFile() async throws {
        let documents = CannedDocuments(documents: [
            Self.base + "single.m3u8": """
                #EXTM3U
                #EXT-X-TARGETDURATION:1
                #EXTINF:1,
                #EXT-X-BYTERANGE:100@0
                all.ts
                #EXTINF:1,
                #EXT-X-BYTERANGE:50
                all.ts
                #EXT-X-ENDLIST
                """,
        ])
        let plan = try await documents.plan(Self.base + "single.m3u8", options: HLSOptions(join: true))
        #expect(plan.requests.map { $0.fileName ?? "" } == ["all.ts"])
        #expect(plan.localFiles[0].text.contains("#EXT-X-BYTERANGE:50\nall.ts"))
        #expect(plan.joins[0].output == "single.ts")
        #expect(plan.joins[0].parts.map(\.range) == [ByteRange(length: 100, offset: 0), ByteRange(length: 50, offset: 100)])
    }

    /// URIs that climb out of the server's directory or are absolute still land in the
    /// resource's directory under a plain name; the local playlist names only local files.
    @Test func climbingURIsGetSafeNames() async throws {
        let documents = CannedDocuments(documents: [
            Self.base + "evil.m3u8": """
                #EXTM3U
                #EXTINF:1,
                ../../../../etc/passwd
                #EXTINF:1,
                /root/.ssh/id_rsa
                #EXTINF:1,
                http://127.0.0.1:8080/a/..%2F..%2Fescape.ts
                #EXTINF:1,
                %22quoted%20name%20%231%3F.ts
                #EXT-X-ENDLIST
                """,
        ])
        let plan = try await documents.plan(Self.base + "evil.m3u8")
        let names = plan.requests.map { $0.fileName ?? "" }
        #expect(plan.requests.allSatisfy { $0.directory.path == "/tmp/resource" })
        #expect(names.allSatisfy { !$0.contains("/") && !$0.hasPrefix(".") && !$0.contains("\"") && !$0.contains("#") })
        #expect(names.count == 4)
        let local = plan.localFiles[0].text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        #expect(local == names)
    }

    /// Documents that must be refused, each with a clear error and nothing planned.
    @Test(arguments: [
        // file:// and other schemes
        ("#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST", "only http and https"),
        ("#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"data:text/plain;base64,AAAA\"\n#EXTINF:1,\ns.ts\n#EXT-X-ENDLIST", "only http and https"),
        // a key on another server
        ("#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"http://keys.example/k\"\n#EXTINF:1,\ns.ts\n#EXT-X-ENDLIST", "another server"),
        // a live playlist
        ("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\ns.ts", "live playlist"),
        // a master naming itself
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nplaylist.m3u8", "names itself"),
        // a master leading to a master
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nnested.m3u8", "nest one level"),
    ])
    func refused(text: String, reason: String) async {
        let documents = CannedDocuments(documents: [
            Self.base + "playlist.m3u8": text,
            Self.base + "nested.m3u8": "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nplaylist.m3u8",
        ])
        do {
            let plan = try await documents.plan(Self.base + "playlist.m3u8")
            Issue.record("planned \(plan.requests.count) files")
        } catch {
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    /// Keys on another server are fetched only when allowed.
    @Test func keysOnAnotherHostWhenAllowed() async throws {
        let documents = CannedDocuments(documents: [
            Self.base + "k.m3u8": "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"http://keys.example/k\"\n#EXTINF:1,\ns.ts\n#EXT-X-ENDLIST",
        ])
        let plan = try await documents.plan(Self.base + "k.m3u8", options: HLSOptions(allowsKeysOnOtherHosts: true, headers: [HeaderField(name: "Cookie", value: "c=1")]))
        #expect(plan.requests.map(\.url.host) == ["keys.example", "127.0.0.1"])
        // Credentials go to the playlist's server only.
        #expect(plan.requests[0].headers.isEmpty)
        #expect(plan.requests[1].headers.map(\.name) == ["Cookie"])
    }
}
