import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestSupport
import Testing

/// `JSONValueParser` and `JSONValueWriter` replace `JSONDecoder` and `JSONEncoder` for the
/// daemon's JSON-RPC bodies; a client must see no difference. Each test holds them to what
/// Foundation's coders do with `JSONValue`'s `Codable` conformance (kept as the reference).
@Suite("JSON values read and written by hand")
struct JSONValueParserTests {
    /// What `JSONDecoder` makes of `text` through `JSONValue`'s `Codable` conformance, nil
    /// when it refuses it.
    static func reference(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    static func parsed(_ bytes: [UInt8]) -> JSONValue? {
        try? bytes.withUnsafeBytes { buffer throws(JSONValueParser.Failure) in try JSONValueParser.parse(buffer) }
    }

    static func encoded(_ value: JSONValue) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    static let edgeCases: [String] = [
        "1.0", "1e3", "-0", "-0.0", "1E400", "-1e400", "1e-400", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "0.1", "1.5e2",
        "1.5", "-2.5E-3", "01", "-01", "+1", ".5", "1.", "-", "1e", "1e+", "0x10", "Infinity", "NaN",
        #""a\/b""#, #""\ud83d\ude00""#, #""\ud83d""#, #""\ud83dx""#, #""\udc00""#, #""\ud83d\u0041""#,
        "\"\u{7f}\"", #""\u0000""#, #""\u00e9\u00E9""#, #""\x""#, #""\u12""#, #""\u12g4""#, "\"tab\there\"",
        "\"line\nbreak\"", #""unterminated"#, #""esc at end\"#, "\"é😀\"",
        #"{"a":1,"a":2}"#, #"{"a":{"b":[1,{"c":null}]},"a":0}"#, "[1,]", #"{"a":1,}"#, "[,]", "[1,,2]",
        "{,}", #"{"a":1,,"b":2}"#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":}"#, "[1 2]", " [ ] ", " { } ",
        "\u{feff}[1]", "true", "false", "null", "nul", "tru", "nulll", "[1] x", "[1]]", "", "   ", "[",
        "{", "]", #"{"a"}"#, "[true,false,null]", "\t\n\r[\t1\n,\r2 ]\n", "[[[[[]]]]]", "[-0.5e-2,10E+2]",
        "9007199254740993.0", "9007199254740993.5", "-9007199254740993.9", "9223372036854775295.9",
        "9223372036854775296.0", "-9223372036854775808.0", "-9223372036854775807.0", "1e18", "1e19",
        "12345678901234567e2", "0.9007199254740993e16", "1.2e-400", "90071992547409930e-1",
        "9223372036854774784.5", "922337203685477400.5", "18446744073709551615e-1", "18446744073709551616e-1",
        "-9223372036854775808e-1", "10000000000000000.0000000000000000000000001", "100000000000000000.25",
    ]

    @Test("edge cases are read as JSONDecoder read them, or refused as it refused them")
    func edgeCases() {
        for text in Self.edgeCases {
            let bytes = Array(text.utf8)
            #expect(Self.parsed(bytes) == Self.reference(bytes), "\(text.debugDescription)")
        }
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22], [0xFF]] {
            #expect(Self.parsed(bytes) == nil)
            #expect(Self.reference(bytes) == nil)
        }
    }

    @Test("random values are written byte for byte as JSONEncoder writes them, and read back alike")
    func randomValues() throws {
        var random = SeededGenerator(seed: 26)
        for _ in 0..<400 {
            let value = Self.randomValue(depth: 0, &random)
            let written = try #require(JSONValueWriter.write(value))
            #expect(written == (try Self.encoded(value)))
            let read = Self.parsed(written)
            #expect(read != nil)
            #expect(read == Self.reference(written))
        }
    }

    @Test("texts damaged at random are refused or read exactly as JSONDecoder does")
    func damagedTexts() throws {
        var random = SeededGenerator(seed: 27)
        let alphabet = Array(#"{}[],:"\\/ -+.eE0123456789tfnulu"#.utf8) + [0x0A, 0x01, 0xC3, 0xA9, 0xFF]
        var accepted = 0
        for _ in 0..<1500 {
            var bytes = try Self.encoded(Self.randomValue(depth: 0, &random))
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0...bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                case 1 where position < bytes.count: bytes.remove(at: position)
                default: if position < bytes.count { bytes[position] = alphabet.randomElement(using: &random)! }
                }
            }
            let reference = Self.reference(bytes)
            #expect(Self.parsed(bytes) == reference, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            if reference != nil { accepted += 1 }
        }
        // Both outcomes must be exercised, or the comparison proves little.
        #expect(accepted > 100 && accepted < 1400, "\(accepted) of 1500 accepted")
    }

    @Test("a non-finite double cannot be written; nesting beyond the bound is refused")
    func limits() {
        #expect(JSONValueWriter.write(.array([.double(.infinity)])) == nil)
        #expect(JSONValueWriter.write(.object(["a": .double(.nan)])) == nil)
        let deep = Array(String(repeating: "[", count: 40).utf8) + Array(String(repeating: "]", count: 40).utf8)
        #expect(throws: JSONValueParser.Failure.self) {
            try deep.withUnsafeBytes { buffer throws(JSONValueParser.Failure) in try JSONValueParser.parse(buffer, maxDepth: 39) }
        }
        #expect(Self.parsed(deep) != nil)
    }

    @Test("haul.events built from the stored texts is the answer RemoteEventBatch encoded to")
    func eventBatchFromStoredTexts() throws {
        var completed = StoredEvent(kind: .completed, download: DownloadID(rawValue: 0xABCD), group: "g", date: Date(timeIntervalSinceReferenceDate: 812_345_678.125))
        completed.fileURL = URL(fileURLWithPath: "/tmp/a dir/ü.bin")
        completed.length = 16_384
        completed.verifiedChecksums = [try Checksum(.sha256, hex: String(repeating: "ab", count: 32))]
        completed.skipped = true
        var failed = StoredEvent(kind: .failed, download: DownloadID(rawValue: 7), group: "g")
        failed.errorCode = "httpStatus"
        failed.errorMessage = "the server said \"404 Not Found\"\n"
        failed.httpStatus = 404
        var started = StoredEvent(kind: .started, download: DownloadID(rawValue: 1))
        started.resumedFrom = 1_000
        var ended = StoredEvent(kind: .groupCompleted, group: "g", date: Date(timeIntervalSinceReferenceDate: 812_345_679))
        ended.completed = [DownloadID(rawValue: 0xABCD)]
        ended.failed = [DownloadID(rawValue: 7)]
        ended.canceled = []
        var events = [started, completed, failed, StoredEvent(kind: .paused, download: DownloadID(rawValue: 2)), ended]
        // Stored as the store writes them (sequence 0 in the text), given their sequence after;
        // and as `JSONEncoder` writes them (the store's fallback), in another order of keys.
        let texts = try events.enumerated().map { offset, event in
            StoredEventText(sequence: Int64(40 + offset), payload: try #require(event.jsonText))
        }
        let encoderTexts = try events.enumerated().map { offset, event in
            StoredEventText(sequence: Int64(40 + offset), payload: String(decoding: try JSONEncoder().encode(event), as: UTF8.self))
        }
        for offset in events.indices { events[offset].sequence = Int64(40 + offset) }
        let progress = [RemoteProgress(id: DownloadID(rawValue: 3), progress: TransferProgress(completedBytes: 10, expectedBytes: nil, bytesPerSecond: 1.5))]
        let expected = try HaulSessionMethods.json(RemoteEventBatch(events: events, progress: progress))
        // The stored texts go into the answer as they are, each with its sequence set: the
        // same bytes as the answer written from values.
        let built = try HaulSessionMethods.eventBatch(texts, progress: progress)
        #expect(texts.allSatisfy { $0.answerText != nil })
        #expect(JSONValueWriter.write(built) == JSONValueWriter.write(expected))
        let fromEncoder = try #require(JSONValueWriter.write(try HaulSessionMethods.eventBatch(encoderTexts, progress: progress)))
        #expect(Self.parsed(fromEncoder) == expected)
        #expect(try texts.decoded() == events)
        #expect(try encoderTexts.decoded() == events)
    }

    @Test("Only a stored event's own \"sequence\":0 is set; a text of another shape is parsed and written again")
    func storedTextsOfOtherShapes() throws {
        var failed = StoredEvent(kind: .failed, download: DownloadID(rawValue: 7), group: "g")
        failed.errorCode = "httpStatus"
        failed.errorMessage = #"the server said {"sequence":0} and "sequence":0"#
        let stored = String(decoding: try JSONEncoder().encode(failed), as: UTF8.self)
        var numbered = failed
        numbered.sequence = 12
        let texts = [
            StoredEventText(sequence: 12, payload: stored),
            // No sequence member, another value in it, a nested one only, not an object, two objects.
            StoredEventText(sequence: 13, payload: #"{"kind":"paused","download":"0000000000000002"}"#),
            StoredEventText(sequence: 14, payload: #"{"kind":"paused","sequence":5}"#),
            StoredEventText(sequence: 15, payload: #"{"a":{"sequence":0},"kind":"paused"}"#),
            StoredEventText(sequence: 16, payload: #"{"a":1}{"sequence":0}"#),
        ]
        #expect(texts.map { $0.answerText != nil } == [true, false, false, false, false])
        let written = try #require(texts[0].answerText)
        #expect(Self.parsed(written) == (try HaulSessionMethods.json(numbered)))

        let built = try HaulSessionMethods.eventBatch(Array(texts[0..<4]), progress: [])
        let bytes = try #require(JSONValueWriter.write(built))
        let answer = try #require(Self.parsed(bytes))
        let sequences = answer["events"]?.arrayValue?.map { $0["sequence"] }
        #expect(sequences == [.integer(12), .integer(13), .integer(14), .integer(15)])
        #expect(answer["events"]?.arrayValue?[3]["a"] == ["sequence": 0])
        #expect(throws: JSONRPCError.self) { try HaulSessionMethods.eventBatch([texts[4]], progress: []) }
    }

    static func randomValue(depth: Int, _ random: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0..<(depth >= 4 ? 5 : 7), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2:
            let magnitude = [Int64(9), 1_000, .max, 1 << 53].randomElement(using: &random)!
            return .integer(Int64.random(in: -magnitude...magnitude, using: &random))
        case 3:
            let exponent = Double(Int.random(in: -30...30, using: &random))
            let double = Double.random(in: -1...1, using: &random) * pow(10, exponent)
            return Bool.random(using: &random) ? .double(double) : .double(double.rounded())
        case 4: return .string(randomString(&random))
        case 5:
            return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth: depth + 1, &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members[randomString(&random)] = randomValue(depth: depth + 1, &random)
            }
            return .object(members)
        }
    }

    static func randomString(_ random: inout SeededGenerator) -> String {
        let pieces: [String] = [
            "a", "Z", "0", "/", "\"", "\\", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{1}", "\u{1f}", "\u{7f}",
            " ", "é", "ü", "\u{2028}", "😀", "\u{ffff}", "url", "https://example.com/a?b=c",
        ]
        return (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }
}
