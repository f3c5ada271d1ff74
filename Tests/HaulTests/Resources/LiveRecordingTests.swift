import Foundation
import Testing
@testable import Haul

/// Recording a live playlist, without I/O: the planner's first load, then reloads fed to the
/// recorder, checking what it fetches, when it reloads (RFC 8216 §6.3.4) and what it writes.
@Suite("HLS live recording")
struct LiveRecordingTests {
    static let url = "http://127.0.0.1:8080/live/index.m3u8"

    static func playlist(_ sequence: Int64, _ names: [String], ended: Bool = false, target: Int = 4, key: String? = nil) -> String {
        var lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:\(target)", "#EXT-X-MEDIA-SEQUENCE:\(sequence)"]
        if let key { lines.append("#EXT-X-KEY:METHOD=AES-128,URI=\"\(key)\"") }
        for name in names { lines += ["#EXTINF:4.0,", name] }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func parse(_ text: String) throws -> MediaPlaylist {
        guard case .media(let playlist) = try PlaylistParser.parse(Data(text.utf8), limits: ResourceLimits()) else {
            throw HaulError(.invalidState, "not a media playlist")
        }
        return playlist
    }

    /// Each segment is fetched once, by sequence number, as the window slides; the reload
    /// comes after the target duration, after half of it when nothing new came; the playlist
    /// ends with EXT-X-ENDLIST and names every segment once.
    @Test func slidingWindowUntilTheEnd() async throws {
        let documents = CannedDocuments(documents: [Self.url: Self.playlist(10, ["s10.ts", "s11.ts"])])
        let plan = try await documents.plan(Self.url, options: HLSOptions(join: true, record: true))
        var recorder = try #require(plan.live)
        #expect(plan.requests.map { $0.fileName ?? "" } == ["s10.ts", "s11.ts"])
        #expect(recorder.next == .reload(after: .seconds(4)))

        #expect(try recorder.take(Self.parse(Self.playlist(10, ["s10.ts", "s11.ts"])), directory: plan.directory).isEmpty)
        #expect(recorder.next == .reload(after: .seconds(2)))
        let grown = try recorder.take(Self.parse(Self.playlist(11, ["s11.ts", "s12.ts", "s13.ts"])), directory: plan.directory)
        #expect(grown.map(\.url.absoluteString) == ["http://127.0.0.1:8080/live/s12.ts", "http://127.0.0.1:8080/live/s13.ts"])
        #expect(recorder.next == .reload(after: .seconds(4)))
        let last = try recorder.take(Self.parse(Self.playlist(13, ["s13.ts", "s14.ts"], ended: true)), directory: plan.directory)
        #expect(last.map { $0.fileName ?? "" } == ["s14.ts"])
        #expect(recorder.next == .stop(.ended))

        let finished = recorder.finishedPlan(plan)
        #expect(finished.live == nil)
        #expect(finished.localFiles.map(\.text) == ["""
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:10
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXTINF:4.0,
            s10.ts
            #EXTINF:4.0,
            s11.ts
            #EXTINF:4.0,
            s12.ts
            #EXTINF:4.0,
            s13.ts
            #EXTINF:4.0,
            s14.ts
            #EXT-X-ENDLIST

            """])
        #expect(finished.joins.first?.parts.map(\.file) == ["s10.ts", "s11.ts", "s12.ts", "s13.ts", "s14.ts"])
        #expect(finished.duration == 20)
    }

    /// Segments the window moved past between two reloads are marked as a discontinuity, and
    /// an AES-128 key without an IV gets each later segment's explicit IV (the local numbering
    /// no longer matches); the key file is fetched once.
    @Test func missedSegmentsAndKeys() async throws {
        let documents = CannedDocuments(documents: [Self.url: Self.playlist(0, ["a0.ts"], key: "k")])
        let plan = try await documents.plan(Self.url, options: HLSOptions(record: true))
        var recorder = try #require(plan.live)
        #expect(plan.requests.map { $0.fileName ?? "" } == ["k.key", "a0.ts"])
        let later = try recorder.take(Self.parse(Self.playlist(5, ["a5.ts"], ended: true, key: "k")), directory: plan.directory)
        #expect(later.map { $0.fileName ?? "" } == ["a5.ts"])
        let text = try #require(recorder.finishedPlan(plan).localFiles.first?.text)
        #expect(text.contains("""
            #EXT-X-KEY:METHOD=AES-128,URI="k.key"
            #EXTINF:4.0,
            a0.ts
            #EXT-X-DISCONTINUITY
            #EXT-X-KEY:METHOD=AES-128,URI="k.key",IV=0x00000000000000000000000000000005
            #EXTINF:4.0,
            a5.ts
            """), "\(text)")
    }

    /// The play-time limit stops the recording, with the segments up to it.
    @Test func stopsAtThePlayTimeLimit() async throws {
        let documents = CannedDocuments(documents: [Self.url: Self.playlist(0, ["a0.ts", "a1.ts", "a2.ts"])])
        let plan = try await documents.plan(Self.url, options: HLSOptions(record: true, recordLimit: 6))
        let recorder = try #require(plan.live)
        #expect(plan.requests.map { $0.fileName ?? "" } == ["a0.ts", "a1.ts"])
        #expect(recorder.next == .stop(.limit))
        #expect(recorder.finishedPlan(plan).localFiles.first?.text.hasSuffix("a1.ts\n#EXT-X-ENDLIST\n") == true)
    }

    /// Without `record`, a live playlist is still refused, and the error names the option.
    @Test func refusedUnlessRecorded() async throws {
        let documents = CannedDocuments(documents: [Self.url: Self.playlist(0, ["a0.ts"])])
        let error = await #expect(throws: HaulError.self) { try await documents.plan(Self.url) }
        #expect(error?.message.contains("--hls-record") == true)
    }
}
