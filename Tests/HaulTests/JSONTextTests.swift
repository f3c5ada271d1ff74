import Foundation
import Testing
@testable import Haul

/// The hand-written column JSON is what `JSONEncoder` (sorted keys, slashes unescaped) writes,
/// byte for byte, and reads back as the same values.
@Suite("JSON column text")
struct JSONTextTests {
    static let awkward = [
        "", "plain", "a/b/c", "quote \" and backslash \\", "tab\tnew\nline\rreturn", "\u{08}\u{0C}\u{01}\u{1F}\u{7F}",
        "ünïcödé ✓ 𝄞", "emoji 🙂 and \u{2028} separator",
    ]

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func reference<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder().encode(value), as: UTF8.self)
    }

    @Test(arguments: awkward) func strings(_ text: String) throws {
        #expect(JSONText.quoted(text) == (try Self.reference(text)))
        #expect(try JSONDecoder().decode(String.self, from: Data(JSONText.quoted(text).utf8)) == text)
    }

    @Test func collections() throws {
        let metadata = Dictionary(uniqueKeysWithValues: Self.awkward.enumerated().map { ("k\($0.offset) \($0.element)", $0.element) })
        #expect(JSONText.object(metadata) == (try Self.reference(metadata)))
        #expect(JSONText.object([:]) == (try Self.reference([String: String]())))
        #expect(JSONText.strings(Self.awkward) == (try Self.reference(Self.awkward)))
        #expect(JSONText.strings([]) == (try Self.reference([String]())))
        let pairs = Self.awkward.map { ($0, $0 + "!") }
        #expect(JSONText.pairs(pairs) == (try Self.reference(pairs.map { [$0.0, $0.1] })))
    }

    @Test func storedEvents() throws {
        var events: [StoredEvent] = []
        for (offset, text) in Self.awkward.enumerated() {
            let id = DownloadID(rawValue: UInt64(offset) * 0x0123_4567_89AB_CDEF)
            let date = Date(timeIntervalSinceReferenceDate: [812_345_678.125, 812_345_679, -1.5, 0][offset % 4])
            var completed = StoredEvent(sequence: Int64(offset), kind: .completed, download: id, group: text, date: date)
            completed.fileURL = URL(fileURLWithPath: "/tmp/\(text).bin")
            completed.length = Int64(offset) << 40
            completed.verifiedChecksums = [try Checksum(.sha256, hex: String(repeating: "0f", count: 32)), try Checksum(.md5, hex: String(repeating: "e1", count: 16))]
            completed.skipped = offset.isMultiple(of: 2)
            var failed = StoredEvent(kind: .failed, download: id, date: date)
            failed.errorCode = "httpStatus"
            failed.errorMessage = text
            failed.httpStatus = 503
            var started = StoredEvent(kind: .started, download: id, date: date)
            started.resumedFrom = Int64(offset)
            var paused = StoredEvent(kind: .paused, download: id, date: date)
            paused.errorCode = text
            var group = StoredEvent(kind: .groupCompleted, group: text, date: date)
            group.completed = [id, DownloadID(rawValue: .max)]
            group.failed = []
            group.canceled = [DownloadID(rawValue: 1)]
            events += [completed, failed, started, paused, group, StoredEvent(kind: .canceled, download: id, group: "g", date: date)]
        }
        for event in events {
            let text = try #require(event.jsonText)
            #expect(text == (try Self.reference(event)))
            #expect(try JSONDecoder().decode(StoredEvent.self, from: Data(text.utf8)) == event)
        }
    }

    @Test func placementIntent() throws {
        for intent in [
            PlacementIntent(directory: "/tmp/haul dir/ü", name: "c \"d\".iso", policy: .rename, device: UInt64.max, inode: 0, length: Int64.max),
            PlacementIntent(directory: "/", name: "a\\b", policy: .overwrite, device: 2049, inode: 123_456, length: 0),
        ] {
            #expect(intent.jsonText == (try Self.reference(intent)))
            #expect(try JSONDecoder().decode(PlacementIntent.self, from: Data(intent.jsonText.utf8)) == intent)
            #expect(PlacementIntent(jsonText: intent.jsonText) == intent)
        }
    }

    /// The flat reader gives back what `JSONText` wrote, and refuses what it did not write.
    @Test func flatReaderReadsWhatTheWriterWrote() throws {
        let metadata = Dictionary(uniqueKeysWithValues: Self.awkward.enumerated().map { ("k\($0.offset) \($0.element)", $0.element) })
        let members = try #require(JSONFlatReader.object(JSONText.object(metadata)))
        #expect(members == metadata.mapValues { .string($0) })
        #expect(JSONFlatReader.object("{}") == [:])
        #expect(JSONFlatReader.object("{\"a\":-12,\"b\":\"\\u00e9\"}") == ["a": .integer("-12"), "b": .string("é")])
        for bad in ["", "{", "{\"a\"}", "{\"a\":[1]}", "{\"a\":{}}", "{\"a\":1,}", "{\"a\":1} x", "{\"a\":\"\\q\"}"] {
            #expect(JSONFlatReader.object(bad) == nil, "\(bad)")
        }
        #expect(PlacementIntent(jsonText: "{\"name\":\"x\"}") == nil)
    }
}
