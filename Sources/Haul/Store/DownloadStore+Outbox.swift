import Foundation
import GRDB

/// The event outbox and session settings: what a daemon needs to give a returning client every
/// event it missed, and to continue a session's downloads alone after a restart.
extension DownloadStore {
    /// Writes rows (`downloads` whole, `changed` only their progress columns), placement
    /// intents, deletions and the events they caused in one transaction, so that
    /// after a crash the outbox never says less (or more) than the downloads' states.
    func save(
        _ downloads: [StoredDownload], progressOf changed: [StoredDownload] = [], movingGroups groupMoves: [GroupMove] = [],
        placements: [StoredPlacement] = [],
        deleting deletions: [DownloadID] = [], deletingGroups groups: [String] = [], events: [StoredEvent],
        trimmingEventsTo maxEvents: Int? = nil, session: String
    ) async throws(HaulError) {
        var writes: [StoreWrite] = []
        if !deletions.isEmpty { writes.append(.delete(deletions)) }
        if !groups.isEmpty { writes.append(.deleteEmptyGroups(session: session, groups)) }
        if !downloads.isEmpty { writes.append(.save(downloads)) }
        if !changed.isEmpty { writes.append(.saveProgress(changed)) }
        if !groupMoves.isEmpty { writes.append(.moveToGroups(session: session, groupMoves)) }
        if !placements.isEmpty { writes.append(.recordPlacements(placements)) }
        if !events.isEmpty { writes.append(.appendEvents(session: session, events)) }
        if let maxEvents { writes.append(.trimEvents(session: session, keeping: maxEvents)) }
        guard !writes.isEmpty else { return }
        try await committer.submit(writes.count == 1 ? writes[0] : .all(writes))
    }

    func acknowledgeEvents(session: String, through sequence: Int64) async throws(HaulError) {
        try await committer.submit(.acknowledgeEvents(session: session, through: sequence))
    }

    func saveSettings(_ settings: SessionSettings, session: String) async throws(HaulError) {
        try await committer.submit(.saveSessionSettings(session: session, settings))
    }

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
