/// A media playlist (RFC 8216 §4.3.3): the segments of one rendition, in play order, with the
/// byte ranges, keys and initialization sections that apply to each.
///
/// URIs are kept as written, with the line they were read from, so that the planner resolves
/// and checks each against the playlist's own URL and the rewriter replaces exactly that text.
package struct MediaPlaylist: Sendable, Hashable {
    package var version: Int?
    package var targetDuration: Int64?
    /// `EXT-X-MEDIA-SEQUENCE`: the sequence number of the first segment (default 0); the IV of
    /// an AES-128 segment without an explicit one.
    package var mediaSequence: Int64 = 0
    /// `EXT-X-PLAYLIST-TYPE` (`VOD` or `EVENT`), when given.
    package var playlistType: String?
    /// `EXT-X-ENDLIST` was present: no segment will be added.
    package var hasEndList = false
    package var segments: [MediaSegment] = []

    package init() {}

    /// True when the playlist can no longer change (ended, or declared `VOD`).
    package var isComplete: Bool { hasEndList || playlistType == "VOD" }

    /// Total play time, the sum of the segments' `EXTINF` durations.
    package var duration: Double { segments.reduce(0) { $0 + $1.duration } }
}

/// One media segment and what applies to it.
package struct MediaSegment: Sendable, Hashable {
    /// The URI as written, and its line.
    package var uri: String
    package var line: Int
    /// `EXTINF` duration in seconds.
    package var duration: Double
    /// The media sequence number (`EXT-X-MEDIA-SEQUENCE` + position).
    package var sequence: Int64
    /// `EXT-X-BYTERANGE`, its offset made explicit.
    package var byteRange: ByteRange?
    /// The `EXT-X-KEY` in force, when the segment is encrypted.
    package var key: SegmentKey?
    /// The `EXT-X-MAP` in force (fMP4's initialization section), when any.
    package var map: MediaInitialization?
    /// `EXT-X-GAP`: the segment is missing on purpose and must not be fetched.
    package var isGap = false
    /// `EXT-X-DISCONTINUITY` comes before it (a change of encoding or timestamps).
    package var discontinuity = false

    package init(uri: String, line: Int, duration: Double, sequence: Int64) {
        self.uri = uri
        self.line = line
        self.duration = duration
        self.sequence = sequence
    }
}

/// A sub-range of a resource: `length` bytes from `offset`.
package struct ByteRange: Sendable, Hashable, Codable {
    package var length: Int64
    package var offset: Int64

    package init(length: Int64, offset: Int64) {
        self.length = length
        self.offset = offset
    }

    /// One past the last byte.
    package var end: Int64 { offset + length }
}

/// `EXT-X-KEY` with `METHOD=AES-128`: the segment is AES-128-CBC encrypted (PKCS#7 padded) with
/// the 16-byte key found at `uri`.
package struct SegmentKey: Sendable, Hashable {
    package var uri: String
    package var line: Int
    /// The explicit IV; nil means the segment's media sequence number, big-endian, in 16 bytes.
    package var iv: [UInt8]?

    package init(uri: String, line: Int, iv: [UInt8]?) {
        self.uri = uri
        self.line = line
        self.iv = iv
    }
}

/// `EXT-X-MAP`: the initialization section that the following segments need.
package struct MediaInitialization: Sendable, Hashable {
    package var uri: String
    package var line: Int
    package var byteRange: ByteRange?

    package init(uri: String, line: Int, byteRange: ByteRange?) {
        self.uri = uri
        self.line = line
        self.byteRange = byteRange
    }
}
