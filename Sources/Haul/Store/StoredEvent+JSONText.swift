import Foundation

extension StoredEvent {
    /// The event as the outbox keeps it: the members and values of its `Codable` form,
    /// written by hand. Every transfer appends two events (started, completed) to a daemon's
    /// outbox on the store's writer: `JSONEncoder` per event was a twentieth of the daemon's
    /// CPU in a batch of small files, and a string per member still 1.6% of it.
    /// Nil for a file URL relative to a base (encoded with `JSONEncoder` then), which no event
    /// of Haul's has. `JSONTextTests` compares it with `JSONEncoder`'s, byte for byte.
    var jsonText: String? {
        jsonBytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// `jsonText`'s UTF-8 bytes, written into one array: what the store binds. Appending
    /// to a `String` member by member was 1.5% of a daemon's CPU in a batch of small files
    /// (10,001 events for 5,000 files); bytes take no string of their own per value.
    var jsonBytes: [UInt8]? {
        if let fileURL, fileURL.baseURL != nil { return nil }
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(192 + (errorMessage?.utf8.count ?? 0) + (fileURL?.relativeString.utf8.count ?? 0))
        // In the order of the keys, as JSONEncoder's `.sortedKeys` writes them (the test
        // compares bytes); the store does not depend on the order.
        var first = true
        func key(_ name: StaticString) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func ids(_ name: StaticString, _ list: [DownloadID]?) {
            guard let list else { return }
            key(name)
            out.append(UInt8(ascii: "["))
            for (index, id) in list.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.appendQuoted(id, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            JSONText.appendQuoted(value, to: &out)
        }
        func number(_ name: StaticString, _ value: Int64?) {
            guard let value else { return }
            key(name)
            JSONText.appendDecimal(value, to: &out)
        }
        ids("canceled", canceled)
        ids("completed", completed)
        // As JSONEncoder writes a date by default: seconds since 2001 as a number.
        key("date")
        var seconds = date.timeIntervalSinceReferenceDate.description
        if seconds.hasSuffix(".0") { seconds.removeLast(2) }
        out.append(contentsOf: seconds.utf8)
        if let download {
            key("download")
            Self.appendQuoted(download, to: &out)
        }
        string("errorCode", errorCode)
        string("errorMessage", errorMessage)
        ids("failed", failed)
        string("fileURL", fileURL?.relativeString)
        string("group", group)
        number("httpStatus", httpStatus.map(Int64.init))
        string("kind", kind.rawValue)
        number("length", length)
        number("resumedFrom", resumedFrom)
        number("sequence", sequence)
        if let skipped {
            key("skipped")
            out.append(contentsOf: (skipped ? "true" : "false").utf8)
        }
        if let verifiedChecksums {
            key("verifiedChecksums")
            out.append(UInt8(ascii: "["))
            for (index, checksum) in verifiedChecksums.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: "{\"algorithm\":".utf8)
                JSONText.appendQuoted(checksum.algorithm.rawValue, to: &out)
                out.append(contentsOf: ",\"hex\":".utf8)
                JSONText.appendQuoted(checksum.hex, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `"0123456789abcdef"`: an ID as its `description` writes it (16 hex digits), quoted.
    private static func appendQuoted(_ id: DownloadID, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var shift = 60
        while shift >= 0 {
            out.append(hexDigits[Int((id.rawValue >> UInt64(shift)) & 0xF)])
            shift -= 4
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
