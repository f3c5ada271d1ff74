/// A master (multivariant) playlist (RFC 8216 §4.3.4): the variants of one presentation, each a
/// media playlist at some bandwidth and resolution, and the alternative renditions (audio,
/// subtitles) that variants refer to by group.
package struct MasterPlaylist: Sendable, Hashable {
    package var version: Int?
    package var independentSegments = false
    package var variants: [Variant] = []
    package var renditions: [Rendition] = []

    package init() {}

    /// The renditions a variant plays with: those of its `AUDIO` and `SUBTITLES` groups (and
    /// `VIDEO`), in the order written. Closed captions travel inside the video and have no URI.
    package func renditions(of variant: Variant) -> [Rendition] {
        renditions.filter { rendition in
            switch rendition.type {
            case "AUDIO": return rendition.groupID == variant.attributes["AUDIO"]
            case "SUBTITLES": return rendition.groupID == variant.attributes["SUBTITLES"]
            case "VIDEO": return rendition.groupID == variant.attributes["VIDEO"]
            default: return false
            }
        }
    }
}

/// One `EXT-X-STREAM-INF` and the URI of its media playlist.
package struct Variant: Sendable, Hashable {
    package var uri: String
    package var line: Int
    /// Peak bits per second.
    package var bandwidth: Int64
    package var averageBandwidth: Int64?
    package var resolution: Resolution?
    package var codecs: String?
    /// Every attribute as written, kept for the local master playlist.
    package var attributes: PlaylistAttributes
    /// The position among the variants, from 0, as `--hls-variant index=N` counts.
    package var index: Int
}

/// One `EXT-X-MEDIA`: an alternative rendition in a group.
package struct Rendition: Sendable, Hashable {
    /// `AUDIO`, `VIDEO`, `SUBTITLES` or `CLOSED-CAPTIONS`.
    package var type: String
    package var groupID: String
    package var name: String
    package var language: String?
    /// The URI of its media playlist; nil when the rendition is carried in the variant's own stream.
    package var uri: String?
    package var line: Int
    /// Every attribute as written, kept for the local master playlist.
    package var attributes: PlaylistAttributes
}
