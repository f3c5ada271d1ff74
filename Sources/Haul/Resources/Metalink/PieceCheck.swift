import Foundation

/// What the finishing step checks of one Metalink file that has piece hashes.
package struct PieceCheck: Sendable, Hashable, Codable {
    /// The file's subdirectory in the resource's directory (empty for none).
    package var directory: String
    /// Its final name; it is downloaded as `stagedName(for: name)`.
    package var name: String
    package var size: Int64?
    package var pieces: MetalinkPieces
    /// Whole-file hashes, checked after the pieces.
    package var checksums: [Checksum]
    /// Where a bad piece is fetched again from, in priority order.
    package var urls: [URL]
    package var headers: [HeaderField]

    /// The hidden name a file with piece hashes is downloaded under until it is verified.
    package static func stagedName(for name: String) -> String { "." + name + ".unverified" }
}
