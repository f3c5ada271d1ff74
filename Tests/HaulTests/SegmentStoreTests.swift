import Foundation
import GRDB
@testable import Haul
import HaulTestSupport
import Testing

@Suite("Segments and transfer options in the store", .timeLimit(.minutes(3)))
struct SegmentStoreTests {
    let segments = [
        DurableSegment(start: 0, end: 1000, durableOffset: 1000),
        DurableSegment(start: 1000, end: 2500, durableOffset: 1700),
        DurableSegment(start: 2500, end: 4000, durableOffset: 2500),
    ]

    /// Segments saved with a checkpoint come back with their download, by ID and with the whole session; a save without segments keeps them, an empty list removes them.
    @Test(arguments: StoreBackend.allCases) func segmentsRoundTripAndAreReplacedOnlyByCheckpoints(_ backend: StoreBackend) async throws {
        let store = try await backend.open()
        var download = StoreTests.minimal(1)
        download.validator = .etag("\"x\"")
        download.expectedLength = 4000
        download.segments = segments
        try await store.save([download, StoreTests.minimal(2)])
        #expect(try await store.load(download.id)?.segments == segments)
        let all = try await store.loadAll(session: "default")
        #expect(all.first { $0.id == download.id }?.segments == segments)
        #expect(all.first { $0.id != download.id }?.segments == nil)

        download.segments = nil
        download.state = .paused
        try await store.save([download])
        #expect(try await store.load(download.id)?.segments == segments, "a state change leaves the segments")

        download.segments = [DurableSegment(start: 0, end: 4000, durableOffset: 3000)]
        try await store.save([download])
        #expect(try await store.load(download.id)?.segments == download.segments, "a checkpoint replaces them")

        download.segments = []
        try await store.save([download])
        #expect(try await store.load(download.id)?.segments == nil)
        download.segments = segments
        try await store.save([download])
        try await store.delete([download.id])
        download.segments = nil
        try await store.save([download])
        #expect(try await store.load(download.id)?.segments == nil, "deleting a download deletes its segments")
    }

    /// A request's split and speed limit are kept with it; a request without them stores nothing extra.
    @Test func transferOptionsRoundTrip() async throws {
        let store = try DownloadStore.open(directory: nil)
        var download = StoreTests.minimal(3)
        download.request.split = 8
        download.request.maxBytesPerSecond = 1 << 20
        var plain = StoreTests.minimal(4)
        plain.request.maxBytesPerSecond = nil
        try await store.save([download, plain])
        #expect(try await store.load(download.id)?.request == download.request)
        #expect(try await store.load(plain.id)?.request == plain.request)
        let stored = try await store.writer.read { db in
            try String?.fetchAll(db, sql: "SELECT transferOptions FROM download ORDER BY position")
        }
        #expect(stored == ["{\"maxBytesPerSecond\":1048576,\"split\":8}", nil])
    }

    /// A request encoded before these options existed still decodes, with none of them.
    @Test func requestsWithoutOptionsDecode() throws {
        // What an older Haul wrote: the same keys, none of the new ones.
        let plain = DownloadRequest(url: URL(string: "https://example.com/a")!, directory: URL(fileURLWithPath: "/tmp"))
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(plain)) as? [String: Any])
        object["split"] = nil
        object["maxBytesPerSecond"] = nil
        let old = try JSONSerialization.data(withJSONObject: object)
        let request = try JSONDecoder().decode(DownloadRequest.self, from: old)
        #expect(request == plain)
        #expect(request.split == nil)
        #expect(request.maxBytesPerSecond == nil)
        var withOptions = request
        withOptions.split = 3
        withOptions.maxBytesPerSecond = 500
        let decoded = try JSONDecoder().decode(DownloadRequest.self, from: JSONEncoder().encode(withOptions))
        #expect(decoded == withOptions)
    }

    /// Recorded segments are trusted only while the part file still reaches their last durable byte and they add up to the length; otherwise only the gapless prefix is.
    @Test func transferStateTrustsSegmentsOnlyWithTheirBytes() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        let request = DownloadRequest(url: URL(string: "http://example.com/f")!, directory: dir)
        let part = PartFile(directory: dir.path, key: "k")
        func state(_ segments: [DurableSegment], length: Int64 = 4000) -> TransferState {
            TransferState(request: request, partKey: "k", validator: .etag("\"x\""), expectedLength: length,
                          durableOffset: 1700, finalURL: nil, segments: segments)
        }
        #expect(state(segments).segments == nil, "no part file: nothing is trusted")

        _ = FileManager.default.createFile(atPath: part.path, contents: Data(count: 2000))
        let trusted = state(segments)
        #expect(trusted.segments?.writtenBytes == 1700)
        #expect(trusted.segments?.firstUnfinished?.written == 1700)
        #expect(trusted.entity?.validator == .etag("\"x\""))

        _ = FileManager.default.createFile(atPath: part.path, contents: Data(count: 1699))
        let short = state(segments)
        #expect(short.segments == nil)
        #expect(short.bytesOnDisk == 0, "the part file is shorter than the durable offset")

        _ = FileManager.default.createFile(atPath: part.path, contents: Data(count: 4000))
        let wrongLength = state(segments, length: 5000)
        #expect(wrongLength.segments == nil)
        #expect(wrongLength.bytesOnDisk == 1700, "the gapless durable prefix is still good")
    }
}
