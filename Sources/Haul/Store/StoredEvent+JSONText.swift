import Foundation

extension StoredEvent {
    /// The event as the outbox keeps it: the members and values of its `Codable` form,
    /// written by hand. Every transfer appends two events (started, completed) to a daemon's
    /// outbox, and `JSONEncoder` per event was a twentieth of the daemon's CPU in a batch of
    /// small files. Nil for a file URL relative to a base (encoded with `JSONEncoder` then),
    /// which no event of Haul's has. `JSONTextTests` compares it with `JSONEncoder`'s, byte for byte.
    var jsonText: String? {
        // In the order of the keys, as JSONEncoder's `.sortedKeys` writes them (the test
        // compares bytes); the store does not depend on the order.
        var members: [(key: String, json: String)] = []
        members.reserveCapacity(8)
        func ids(_ list: [DownloadID]) -> String { JSONText.strings(list.map(\.description)) }
        if let canceled { members.append(("canceled", ids(canceled))) }
        if let completed { members.append(("completed", ids(completed))) }
        // As JSONEncoder writes a date by default: seconds since 2001 as a number.
        var seconds = date.timeIntervalSinceReferenceDate.description
        if seconds.hasSuffix(".0") { seconds.removeLast(2) }
        members.append(("date", seconds))
        if let download { members.append(("download", JSONText.quoted(download.description))) }
        if let errorCode { members.append(("errorCode", JSONText.quoted(errorCode))) }
        if let errorMessage { members.append(("errorMessage", JSONText.quoted(errorMessage))) }
        if let failed { members.append(("failed", ids(failed))) }
        if let fileURL {
            guard fileURL.baseURL == nil else { return nil }
            members.append(("fileURL", JSONText.quoted(fileURL.relativeString)))
        }
        if let group { members.append(("group", JSONText.quoted(group))) }
        if let httpStatus { members.append(("httpStatus", String(httpStatus))) }
        members.append(("kind", JSONText.quoted(kind.rawValue)))
        if let length { members.append(("length", String(length))) }
        if let resumedFrom { members.append(("resumedFrom", String(resumedFrom))) }
        members.append(("sequence", String(sequence)))
        if let skipped { members.append(("skipped", skipped ? "true" : "false")) }
        if let verifiedChecksums {
            let objects = verifiedChecksums.map {
                JSONText.object(sortedMembers: [("algorithm", JSONText.quoted($0.algorithm.rawValue)), ("hex", JSONText.quoted($0.hex))])
            }
            members.append(("verifiedChecksums", "[" + objects.joined(separator: ",") + "]"))
        }
        return JSONText.object(sortedMembers: members)
    }
}
