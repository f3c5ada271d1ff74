import Foundation

extension StoredEvent {
    /// The event as the outbox keeps it: the members and values of its `Codable` form,
    /// written by hand into one string. Every transfer appends two events (started, completed)
    /// to a daemon's outbox on the store's writer: `JSONEncoder` per event was a twentieth of
    /// the daemon's CPU in a batch of small files, and a string per member still 1.6% of it.
    /// Nil for a file URL relative to a base (encoded with `JSONEncoder` then), which no event
    /// of Haul's has. `JSONTextTests` compares it with `JSONEncoder`'s, byte for byte.
    var jsonText: String? {
        if let fileURL, fileURL.baseURL != nil { return nil }
        var out = "{"
        out.reserveCapacity(160 + (errorMessage?.utf8.count ?? 0) + (fileURL?.relativeString.utf8.count ?? 0))
        // In the order of the keys, as JSONEncoder's `.sortedKeys` writes them (the test
        // compares bytes); the store does not depend on the order.
        var first = true
        func key(_ name: String) {
            if !first { out += "," }
            first = false
            out += "\""
            out += name
            out += "\":"
        }
        func ids(_ name: String, _ list: [DownloadID]?) {
            guard let list else { return }
            key(name)
            out += "["
            for (index, id) in list.enumerated() {
                if index > 0 { out += "," }
                JSONText.appendQuoted(id.description, to: &out)
            }
            out += "]"
        }
        func string(_ name: String, _ value: String?) {
            guard let value else { return }
            key(name)
            JSONText.appendQuoted(value, to: &out)
        }
        func number<N: BinaryInteger>(_ name: String, _ value: N?) {
            guard let value else { return }
            key(name)
            out += String(value)
        }
        ids("canceled", canceled)
        ids("completed", completed)
        // As JSONEncoder writes a date by default: seconds since 2001 as a number.
        key("date")
        var seconds = date.timeIntervalSinceReferenceDate.description
        if seconds.hasSuffix(".0") { seconds.removeLast(2) }
        out += seconds
        string("download", download?.description)
        string("errorCode", errorCode)
        string("errorMessage", errorMessage)
        ids("failed", failed)
        string("fileURL", fileURL?.relativeString)
        string("group", group)
        number("httpStatus", httpStatus)
        string("kind", kind.rawValue)
        number("length", length)
        number("resumedFrom", resumedFrom)
        number("sequence", sequence)
        if let skipped {
            key("skipped")
            out += skipped ? "true" : "false"
        }
        if let verifiedChecksums {
            key("verifiedChecksums")
            out += "["
            for (index, checksum) in verifiedChecksums.enumerated() {
                if index > 0 { out += "," }
                out += "{\"algorithm\":"
                JSONText.appendQuoted(checksum.algorithm.rawValue, to: &out)
                out += ",\"hex\":"
                JSONText.appendQuoted(checksum.hex, to: &out)
                out += "}"
            }
            out += "]"
        }
        out += "}"
        return out
    }
}
