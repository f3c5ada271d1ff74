import Haul

extension StoredEventText {
    /// The event's stored text with its sequence set, to be put into `haul.events`' answer as
    /// it is (`JSONValue.written`); nil when the text is not a JSON object whose own
    /// `sequence` member is the `0` the outbox writes (a text of another shape is parsed and
    /// written again instead, as before).
    ///
    /// Why: every small file puts two events in a daemon's outbox, and parsing each stored text
    /// into values only to write them back with one member changed was 20–24 ms of the
    /// daemon's CPU for a batch of 5,000, its dictionaries a good part of its allocations.
    ///
    /// The text is scanned once for its structure (strings with their escapes, nesting), so
    /// that only the object's own `"sequence":0` is taken: never one in a nested object or in
    /// a string (where its quotes would be escaped anyway), and only in a text that is one
    /// whole object.
    var answerText: [UInt8]? {
        var payload = payload
        return payload.withUTF8 { bytes in
            guard let zero = Self.offsetOfStoredSequence(in: bytes) else { return nil }
            var text: [UInt8] = []
            text.reserveCapacity(bytes.count + 19)
            text.append(contentsOf: bytes[..<zero])
            text.append(contentsOf: String(sequence).utf8)
            text.append(contentsOf: bytes[(zero + 1)...])
            return text
        }
    }

    /// Where the `0` of the object's own `"sequence":0` is in `bytes`; nil when `bytes` is not
    /// one whole JSON object with that member.
    private static func offsetOfStoredSequence(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        var depth = 0
        var strings = JSONStringState()
        var zero: Int?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if strings.consumesInString(byte) {
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                let after = index + storedSequence.count
                if depth == 1, zero == nil, bytes[index - 1] == UInt8(ascii: "{") || bytes[index - 1] == UInt8(ascii: ","),
                   after < bytes.count, bytes[after] == UInt8(ascii: ",") || bytes[after] == UInt8(ascii: "}"),
                   bytes[index..<after].elementsEqual(storedSequence) {
                    zero = after - 1
                    index = after
                    continue
                }
                strings.enterString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                // Closed before the text's end: not one whole object.
                if depth <= 0, index != bytes.count - 1 { return nil }
            default:
                break
            }
            index += 1
        }
        guard depth == 0, !strings.isInString else { return nil }
        return zero
    }

    /// The member as the outbox writes it into every stored text (`StoredEvent.jsonText`).
    private static let storedSequence = Array(#""sequence":0"#.utf8)
}
