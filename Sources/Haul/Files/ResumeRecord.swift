import Foundation

/// What identifies the bytes a server serves, so that a resume only appends to the same file.
enum Validator: Codable, Hashable, Sendable {
    /// A strong ETag, quotes included, exactly as the server sent it.
    case etag(String)
    /// A Last-Modified date, exactly as the server sent it.
    case lastModified(String)

    /// The value for `If-Range`.
    var headerValue: String {
        switch self {
        case .etag(let value), .lastModified(let value): return value
        }
    }
}

/// The resume state kept beside a part file (`.haul-KEY.resume`), as plain JSON.
///
/// The seeds' lesson is that opaque resume blobs break; this one is a handful of named
/// fields. It is written only at checkpoints, after the part file was flushed, so the offset
/// it records is always backed by bytes on the device ("data before metadata").
struct ResumeRecord: Codable, Hashable, Sendable {
    static let currentFormat = 1

    var format: Int = ResumeRecord.currentFormat
    /// The URL as requested; a record for another URL is ignored.
    var url: String
    /// Where the bytes came from after redirects.
    var finalURL: String?
    var validator: Validator
    /// Total length of the entity, when the server announced it.
    var expectedLength: Int64?
    /// Bytes at the start of the part file known to be on disk.
    var durableOffset: Int64

    static func load(from path: String) -> ResumeRecord? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let record = try? JSONDecoder().decode(ResumeRecord.self, from: data),
              record.format == currentFormat, record.durableOffset >= 0
        else { return nil }
        return record
    }

    /// Writes via a temporary file and a rename, so a crash leaves the old or the new record,
    /// never half of one.
    func save(to path: String) throws(HaulError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch {
            throw HaulError(.fileSystem, "cannot encode resume state: \(error)")
        }
        let temporary = path + ".tmp"
        do {
            // Not `.atomic`: the rename below already makes the replacement atomic.
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw HaulError(.fileSystem, "cannot write resume state \(temporary): \(error)")
        }
        try SystemCalls.renameReplacing(from: temporary, to: path)
    }
}
