import Foundation

/// A Metalink 4 document (RFC 5854): files, each with its mirrors, size, hashes and piece hashes.
package struct MetalinkDocument: Sendable, Hashable {
    package var files: [MetalinkFile] = []

    package init(files: [MetalinkFile] = []) { self.files = files }
}

/// One `<file>` of a Metalink document.
package struct MetalinkFile: Sendable, Hashable {
    /// The `name` attribute as written: a relative path, checked by `MetalinkPlanner`.
    package var name: String
    package var size: Int64?
    /// `<url>` elements with their `priority` (1 is the most preferred; absent sorts last).
    package var urls: [(url: String, priority: Int?)] = []
    /// Whole-file `<hash>` values by their `type` (`sha-256`, …), hashes of unknown types dropped.
    package var hashes: [Checksum] = []
    /// `<pieces>`: the length of each piece and the hash of each, in order.
    package var pieces: MetalinkPieces?

    package init(name: String) { self.name = name }

    /// The URLs, most preferred first (stable among equal priorities).
    package var urlsByPriority: [String] {
        urls.enumerated().sorted { ($0.element.priority ?? Int.max, $0.offset) < ($1.element.priority ?? Int.max, $1.offset) }
            .map(\.element.url)
    }

    package static func == (lhs: MetalinkFile, rhs: MetalinkFile) -> Bool {
        lhs.name == rhs.name && lhs.size == rhs.size && lhs.urls.map(\.url) == rhs.urls.map(\.url)
            && lhs.urls.map(\.priority) == rhs.urls.map(\.priority) && lhs.hashes == rhs.hashes && lhs.pieces == rhs.pieces
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(urls.map(\.url))
    }
}

/// `<pieces length="…" type="…">`: piece hashes of one algorithm.
package struct MetalinkPieces: Sendable, Hashable, Codable {
    package var length: Int64
    package var algorithm: Checksum.Algorithm
    /// Lower-case hex digests, one per piece.
    package var hashes: [String]
}
