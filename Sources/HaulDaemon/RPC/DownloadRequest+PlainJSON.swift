import Foundation
import Haul

extension DownloadRequest {
    /// The request that `init(from:)` decodes from `value`, read straight from the parsed
    /// JSON when it holds only what the requests of a batch usually hold; nil when anything
    /// else is there, and the caller decodes it through `JSONDecoder` instead, which then
    /// also words any refusal.
    ///
    /// Why: a `haul.addGroup` of 5,000 requests spent about 16 µs of CPU on each before any
    /// could start: the parsed value written out as JSON text again, scanned again by
    /// `JSONDecoder`, and taken apart through `Codable`'s containers. Read here, a request
    /// costs about what parsing its URL costs.
    ///
    /// What it reads, exactly as `init(from:)` does: `url` and `directory`, both required and
    /// read by the same rules (`decodedURL`, `decodedDirectory`); `priority`,
    /// `conflictPolicy`, `metadata` (strings only), `split` (in `splitRange`) and
    /// `maxBytesPerSecond` (0 or more) when given; `headers`, `checksums` and `mirrors` when
    /// empty; `fileName` and `waitDeadline` only when absent or null (their checks are the
    /// decoder's). A key absent or null takes the initialiser's default; keys Haul does not
    /// know are ignored, as the decoder ignores them. Anything of another type or out of
    /// range is left to the decoder. `DownloadRequestPlainJSONTests` holds it to the decoder.
    static func plain(_ value: JSONValue) -> DownloadRequest? {
        guard case .object(let members) = value,
              case .string(let urlText)? = members["url"], let url = decodedURL(urlText),
              case .string(let directoryText)? = members["directory"], let directory = decodedDirectory(directoryText)
        else { return nil }
        var request = DownloadRequest(url: url, directory: directory)
        for (key, member) in members where member != .null {
            switch key {
            case "url", "directory":
                continue
            case "priority":
                guard case .integer(let priority) = member, let exact = Int(exactly: priority) else { return nil }
                request.priority = exact
            case "conflictPolicy":
                guard case .string(let text) = member, let policy = ConflictPolicy(rawValue: text) else { return nil }
                request.conflictPolicy = policy
            case "metadata":
                guard case .object(let entries) = member else { return nil }
                var metadata: [String: String] = [:]
                for (name, entry) in entries {
                    guard case .string(let text) = entry else { return nil }
                    metadata[name] = text
                }
                request.metadata = metadata
            case "split":
                guard case .integer(let split) = member, let exact = Int(exactly: split), splitRange.contains(exact) else { return nil }
                request.split = exact
            case "maxBytesPerSecond":
                guard case .integer(let limit) = member, limit >= 0 else { return nil }
                request.maxBytesPerSecond = limit
            case "headers", "checksums", "mirrors":
                // Their elements have checks of their own: only an empty list is read here.
                guard case .array(let elements) = member, elements.isEmpty else { return nil }
            case "fileName", "waitDeadline":
                return nil
            default:
                continue
            }
        }
        return request
    }
}
