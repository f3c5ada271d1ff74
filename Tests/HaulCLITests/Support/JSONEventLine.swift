import Foundation
import HaulTestSupport

/// One line of `haul get --json`, decoded with the fields the tests look at. Decoding every
/// line strictly is itself a check: a line that is not a JSON object fails the test.
struct JSONEventLine: Decodable, Sendable {
    struct ErrorBody: Decodable, Sendable {
        let code: String
        let message: String
        let exitCode: Int32
    }

    let event: String
    let id: String?
    let url: String?
    let resumedFrom: Int64?
    let durableOffset: Int64?
    let finalURL: String?
    let completedBytes: Int64?
    let expectedBytes: Int64?
    let path: String?
    let bytes: Int64?
    let receivedBytes: Int64?
    let attempt: Int?
    let waiting: Bool?
    let alreadyExisted: Bool?
    let skipped: Int?
    let checksums: [String: String]?
    let error: ErrorBody?
    let completed: Int?
    let failed: Int?
    let total: Int?
    let exitCode: Int32?
    let interrupted: Bool?

    static func decode(_ line: String) throws -> JSONEventLine {
        try JSONDecoder().decode(JSONEventLine.self, from: Data(line.utf8))
    }

    static func decodeAll(_ lines: [String]) throws -> [JSONEventLine] {
        try lines.filter { !$0.isEmpty }.map(decode)
    }
}

extension ProcessOutput {
    /// The first `checkpointed` line: from then on a kill -9 keeps a recorded prefix.
    func checkpoint() async -> String? {
        await firstLine { line in
            guard let event = try? JSONEventLine.decode(line), event.event == "checkpointed" else { return false }
            return (event.durableOffset ?? 0) > 0
        }
    }

    /// Waits for a `--json` progress line at or past `bytes`; nil if the output ended first.
    func progress(reaching bytes: Int64) async -> String? {
        await firstLine { line in
            guard let event = try? JSONEventLine.decode(line), event.event == "progress" else { return false }
            return (event.completedBytes ?? 0) >= bytes
        }
    }
}
