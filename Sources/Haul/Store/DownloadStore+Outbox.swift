import Foundation
import GRDB

/// The event outbox and session settings: what a daemon needs to give a returning client every
/// event it missed, and to continue a session's downloads alone after a restart.
extension DownloadStore {
    /// The session's unacknowledged events after `sequence`, oldest first.
    func eventTexts(session: String, after sequence: Int64, limit: Int) async throws(HaulError) -> [StoredEventText] {
        try await read("read the events of session '\(session)'") { db in
            try Row.fetchAll(db, sql: """
                SELECT sequence, payload FROM event WHERE session = ? AND sequence > ? ORDER BY sequence LIMIT ?
                """, arguments: [session, sequence, limit]).map { row in
                StoredEventText(sequence: row["sequence"], payload: row["payload"])
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
