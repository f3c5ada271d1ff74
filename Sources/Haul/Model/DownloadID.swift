import Foundation

/// The identity of one download.
///
/// The seeds show what goes wrong when downloads are matched by URL: the URL changes on
/// redirect, may be missing after a resume, and the same URL may be downloaded twice. Haul
/// generates an ID instead: 16 lowercase hex characters, the same shape aria2 uses for GIDs,
/// so that the ID can be shown to RPC clients unchanged.
public struct DownloadID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The 64-bit value behind the ID.
    public let rawValue: UInt64

    /// The ID with this 64-bit value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses 16 hex characters; returns nil for anything else.
    public init?(_ text: String) {
        guard text.utf8.count == 16, let value = UInt64(text, radix: 16) else { return nil }
        self.rawValue = value
    }

    /// A new ID: the minutes since 2024 in its top 24 bits, 40 random bits below.
    ///
    /// Random enough that two processes adding downloads to one store at the same minute do
    /// not pick the same ID, and increasing from minute to minute: the store's unique index of
    /// IDs then takes new downloads at its end. Wholly random IDs went in at random places all
    /// over it, so that with a long history every batch rewrote most of that index.
    public static func random(now: Date = Date()) -> DownloadID {
        var generator = SystemRandomNumberGenerator()
        return random(now: now, using: &generator)
    }

    /// A new ID as `random(now:)` makes it, its random bits from `generator`.
    static func random(now: Date, using generator: inout some RandomNumberGenerator) -> DownloadID {
        let minutes = UInt64(max(0, now.timeIntervalSince(epoch) / 60)) & minuteMask
        return DownloadID(rawValue: minutes << randomBits | generator.next() & (1 << randomBits - 1))
    }

    private static let randomBits: UInt64 = 40
    /// 24 bits of minutes: until 2055, after which the prefix wraps (IDs stay random and unique).
    private static let minuteMask: UInt64 = (1 << 24) - 1
    private static let epoch = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01 UTC

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Encoded as its 16 hex characters: a JSON number cannot hold every 64-bit value exactly
    /// (most parsers read numbers as doubles), and aria2's GIDs are written the same way.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = DownloadID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a download ID (16 hex characters)"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
