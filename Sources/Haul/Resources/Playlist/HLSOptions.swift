/// How an HLS playlist becomes a download (`haul get --hls-variant`, `--join`, …).
package struct HLSOptions: Sendable, Hashable, Codable {
    /// Which variant of a master playlist (default: the highest bandwidth).
    package var variant: VariantChoice
    /// Also make one playable file per media playlist once every segment is here.
    package var join: Bool
    /// Accept `EXT-X-KEY` URIs on another server than the playlist's (default: refused, since a
    /// playlist could otherwise make Haul fetch from any host and keep what it answered).
    package var allowsKeysOnOtherHosts: Bool
    /// Headers for the playlists and every file; credentials among them (`Authorization`,
    /// `Cookie`) go only to the playlist's own server.
    package var headers: [HeaderField]
    package var limits: ResourceLimits
    /// Record a live playlist (no `EXT-X-ENDLIST`) until it ends, instead of refusing it
    /// (`haul get --hls-record`; see `LiveRecording`).
    package var record: Bool
    /// Stop recording after this much play time, in seconds (`--hls-record-limit`); nil: at
    /// the end of the playlist, or `limits.maxSegments` segments.
    package var recordLimit: Double?

    package init(
        variant: VariantChoice = .highest, join: Bool = false, allowsKeysOnOtherHosts: Bool = false,
        headers: [HeaderField] = [], limits: ResourceLimits = ResourceLimits(), record: Bool = false,
        recordLimit: Double? = nil
    ) {
        self.record = record
        self.recordLimit = recordLimit
        self.variant = variant
        self.join = join
        self.allowsKeysOnOtherHosts = allowsKeysOnOtherHosts
        self.headers = headers
        self.limits = limits
    }

    /// Media types servers use for playlists.
    package static let mediaTypes: Set<String> = [
        "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl",
    ]
}
