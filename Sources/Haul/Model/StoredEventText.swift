import Foundation

/// An outbox event as the store keeps it: the sequence the store gave it and its JSON, the
/// `Codable` form of `StoredEvent` written when it was appended (whose own `sequence` field is
/// not the store's).
///
/// The daemon sends `haul.events` answers from these texts without decoding and encoding each
/// event again (both were a tenth of its CPU in a batch of 5,000 small files); a manager that
/// wants the values decodes them (`decoded()`).
package struct StoredEventText: Sendable, Hashable {
    package var sequence: Int64
    package var payload: String

    package init(sequence: Int64, payload: String) {
        self.sequence = sequence
        self.payload = payload
    }
}

extension [StoredEventText] {
    /// The events these texts hold, each with its store's sequence.
    package func decoded() throws(HaulError) -> [StoredEvent] {
        let decoder = JSONDecoder()
        var events: [StoredEvent] = []
        events.reserveCapacity(count)
        for text in self {
            do {
                var event = try decoder.decode(StoredEvent.self, from: Data(text.payload.utf8))
                event.sequence = text.sequence
                events.append(event)
            } catch {
                throw HaulError(.fileSystem, "event \(text.sequence) kept in the download store cannot be read: \(error)")
            }
        }
        return events
    }
}
