import Foundation
import GRDB

/// What a session's outbox holds on to: downloads whose end, and groups whose completion, are
/// reported by events the client has not acknowledged. The retention rule never forgets them:
/// until the app has seen how a download ended, the session answers for it.
struct OutboxPins: Sendable, Equatable {
    var downloads: Set<DownloadID> = []
    var groups: Set<String> = []

    var isEmpty: Bool { downloads.isEmpty && groups.isEmpty }
}

extension DownloadStore {
    /// The session's pins, from its unacknowledged events (`through`: only those up to that
    /// sequence). A pass over the outbox, which `Retention.maxKeptEvents` bounds.
    func outboxPins(session: String, through sequence: Int64 = .max) async throws(HaulError) -> OutboxPins {
        try await read("read the unacknowledged events of session '\(session)'") { db in
            try Self.outboxPins(session: session, through: sequence, in: db)
        }
    }

    static func outboxPins(session: String, through sequence: Int64 = .max, in db: Database) throws -> OutboxPins {
        var pins = OutboxPins()
        let rows = try Row.fetchCursor(db, sql: """
            SELECT kind, json_extract(payload, '$.download') AS download, json_extract(payload, '$.group') AS groupName
            FROM event WHERE session = ? AND sequence <= ? AND kind IN ('completed', 'failed', 'canceled', 'groupCompleted')
            """, arguments: [session, sequence])
        while let row = try rows.next() {
            if row["kind"] as String == "groupCompleted" {
                if let name: String = row["groupName"] { pins.groups.insert(name) }
            } else if let text: String = row["download"], let id = DownloadID(text) {
                pins.downloads.insert(id)
            }
        }
        return pins
    }
}
