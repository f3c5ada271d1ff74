import Foundation
import GRDB

/// The event outbox and session settings: what a daemon needs to give a returning client every
/// event it missed, and to continue a session's downloads alone after a restart.
extension DownloadStore {
    /// The session's unacknowledged events after `sequence`, oldest first.
    func events(session: String, after sequence: Int64, limit: Int) async throws(HaulError) -> [StoredEvent] {
        try await read("read the events of session '\(session)'") { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT sequence, payload FROM event WHERE session = ? AND sequence > ? ORDER BY sequence LIMIT ?
                """, arguments: [session, sequence, limit])
            let decoder = JSONDecoder()
            return try rows.map { row in
                var event = try decoder.decode(StoredEvent.self, from: Data((row["payload"] as String).utf8))
                event.sequence = row["sequence"]
                return event
            }
        }
    }

    /// Every session in the store, with its settings when it saved some.
    func sessions() async throws(HaulError) -> [(id: String, settings: SessionSettings?)] {
        try await read("list the sessions") { db in
            let decoder = JSONDecoder()
            return try Row.fetchAll(db, sql: "SELECT id, settings FROM session ORDER BY id").map { row in
                let text: String? = row["settings"]
                let settings = try text.map { try decoder.decode(SessionSettings.self, from: Data($0.utf8)) }
                return (row["id"], settings)
            }
        }
    }
}
