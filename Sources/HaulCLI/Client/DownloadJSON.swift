import Foundation
import Haul

/// A download as `haul ls --json` and `haul status --json` print it: typed numbers rather than
/// aria2's strings, so that scripts (and jq) need no conversion, and `null` where a value is
/// not known yet.
struct DownloadJSON: Encodable, Sendable {
    var gid: String
    var state: String
    var name: String
    var path: String?
    var directory: String?
    var url: String?
    var completedBytes: Int64
    var totalBytes: Int64?
    /// Between 0 and 1; null while the length is unknown.
    var fraction: Double?
    var bytesPerSecond: Int64
    var errorCode: Int?
    var errorMessage: String?

    enum CodingKeys: String, CodingKey {
        case gid, state, name, path, directory, url, completedBytes, totalBytes, fraction, bytesPerSecond, errorCode, errorMessage
    }

    init(_ entry: Aria2Entry) {
        gid = entry.gid
        state = entry.status.rawValue
        name = entry.name
        path = entry.path
        directory = entry.dir.isEmpty ? nil : entry.dir
        url = entry.url
        completedBytes = entry.completedLength
        totalBytes = entry.expectedBytes
        fraction = entry.progress.fractionCompleted
        bytesPerSecond = entry.status == .active ? entry.downloadSpeed : 0
        errorCode = entry.status == .error ? entry.errorCode.flatMap { Int($0) } : nil
        errorMessage = entry.failureMessage
    }

    /// Writes every key, nulls included, so that each object has the same shape.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(gid, forKey: .gid)
        try container.encode(state, forKey: .state)
        try container.encode(name, forKey: .name)
        try container.encode(path, forKey: .path)
        try container.encode(directory, forKey: .directory)
        try container.encode(url, forKey: .url)
        try container.encode(completedBytes, forKey: .completedBytes)
        try container.encode(totalBytes, forKey: .totalBytes)
        try container.encode(fraction, forKey: .fraction)
        try container.encode(bytesPerSecond, forKey: .bytesPerSecond)
        try container.encode(errorCode, forKey: .errorCode)
        try container.encode(errorMessage, forKey: .errorMessage)
    }

    /// `value` as pretty, key-sorted JSON text.
    static func text(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, numbers and nulls cannot fail.
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}
