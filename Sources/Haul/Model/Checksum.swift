/// An expected (or computed) digest of a file's bytes.
public struct Checksum: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The hash functions Haul computes while streaming.
    public enum Algorithm: String, Hashable, Sendable, Codable, CaseIterable {
        /// MD5 (128 bits): only to match what a server publishes; not a security check.
        case md5
        /// SHA-1 (160 bits): only to match what a server publishes; not a security check.
        case sha1
        /// SHA-256 (256 bits).
        case sha256
        /// SHA-512 (512 bits).
        case sha512

        /// Length of the digest in hex characters.
        public var hexLength: Int {
            switch self {
            case .md5: return 32
            case .sha1: return 40
            case .sha256: return 64
            case .sha512: return 128
            }
        }

        /// Accepts Haul's names (`sha256`) and aria2's (`sha-256`), in any case.
        public init?(name: String) {
            let normalized = name.lowercased().replacingOccurrences(of: "-", with: "")
            self.init(rawValue: normalized)
        }
    }

    /// The digest's algorithm.
    public let algorithm: Algorithm
    /// Lowercase hex digest.
    public let hex: String

    /// Validates that `hex` has the right length and only hex digits.
    public init(_ algorithm: Algorithm, hex: String) throws(HaulError) {
        let lower = hex.lowercased()
        guard lower.utf8.count == algorithm.hexLength,
              lower.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            throw HaulError(
                .invalidRequest,
                "a \(algorithm.rawValue) checksum is \(algorithm.hexLength) hex digits, got '\(hex)'")
        }
        self.algorithm = algorithm
        self.hex = lower
    }

    /// Parses `TYPE=HEX`, e.g. `sha256=9f86…` or aria2's `sha-256=9f86…`.
    public init(parsing text: String) throws(HaulError) {
        guard let equals = text.firstIndex(of: "=") else {
            throw HaulError(.invalidRequest, "a checksum is written TYPE=HEX (e.g. sha256=…), got '\(text)'")
        }
        let name = String(text[..<equals])
        guard let algorithm = Algorithm(name: name) else {
            let known = Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
            throw HaulError(.invalidRequest, "unknown checksum type '\(name)'; use one of \(known)")
        }
        try self.init(algorithm, hex: String(text[text.index(after: equals)...]))
    }

    public var description: String { "\(algorithm.rawValue)=\(hex)" }
}
