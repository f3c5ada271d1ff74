import Foundation

extension StoredEvent {
    /// The event as the outbox keeps it: the members and values of its `Codable` form,
    /// written by hand. Every transfer appends two events (started, completed) to a daemon's
    /// outbox, and `JSONEncoder` per event was a twentieth of the daemon's CPU in a batch of
    /// small files. Nil for a file URL relative to a base (encoded with `JSONEncoder` then),
    /// which no event of Haul's has. `JSONTextTests` compares it with `JSONEncoder`'s, byte for byte.
    var jsonText: String? {
        var out = "{"
        out.reserveCapacity(256)
        func member(_ key: String, _ json: String) {
            if out.utf8.count > 1 { out += "," }
            out += "\""
            out += key
            out += "\":"
            out += json
        }
        func member(_ key: String, quoting text: String) {
            if out.utf8.count > 1 { out += "," }
            out += "\""
            out += key
            out += "\":"
            JSONText.appendQuoted(text, to: &out)
        }
        func ids(_ list: [DownloadID]) -> String {
            "[" + list.map { "\"\($0.description)\"" }.joined(separator: ",") + "]"
        }
        // In the order of the keys, as JSONEncoder's `.sortedKeys` writes them (the test
        // compares bytes); the store does not depend on the order.
        if let canceled { member("canceled", ids(canceled)) }
        if let completed { member("completed", ids(completed)) }
        // As JSONEncoder writes a date by default: seconds since 2001 as a number.
        var seconds = date.timeIntervalSinceReferenceDate.description
        if seconds.hasSuffix(".0") { seconds.removeLast(2) }
        member("date", seconds)
        if let download { member("download", quoting: download.description) }
        if let errorCode { member("errorCode", quoting: errorCode) }
        if let errorMessage { member("errorMessage", quoting: errorMessage) }
        if let failed { member("failed", ids(failed)) }
        if let fileURL {
            guard fileURL.baseURL == nil else { return nil }
            member("fileURL", quoting: fileURL.relativeString)
        }
        if let group { member("group", quoting: group) }
        if let httpStatus { member("httpStatus", String(httpStatus)) }
        member("kind", quoting: kind.rawValue)
        if let length { member("length", String(length)) }
        if let resumedFrom { member("resumedFrom", String(resumedFrom)) }
        member("sequence", String(sequence))
        if let skipped { member("skipped", skipped ? "true" : "false") }
        if let verifiedChecksums {
            member("verifiedChecksums", "[" + verifiedChecksums.map {
                "{\"algorithm\":" + JSONText.quoted($0.algorithm.rawValue) + ",\"hex\":" + JSONText.quoted($0.hex) + "}"
            }.joined(separator: ",") + "]")
        }
        out += "}"
        return out
    }
}
