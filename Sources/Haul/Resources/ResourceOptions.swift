import Foundation

/// How `DownloadSession.addResource(_:toGroup:in:options:)` reads a document of shards: an HLS
/// playlist or a Metalink 4 document.
public struct ResourceOptions: Sendable, Hashable {
    /// What kind of document the source is.
    public enum Kind: String, Sendable, Hashable {
        /// An HLS playlist (`.m3u8`, `application/vnd.apple.mpegurl`), media or master.
        case hls
        /// A Metalink 4 document (`.meta4`, `application/metalink4+xml`, RFC 5854).
        case metalink
    }

    /// The kind, or nil (the default) to tell it by the extension, then by the content type.
    public var kind: Kind?
    /// Which variant of a master playlist: `highest` (the default), `lowest`, `index=N`,
    /// `bandwidth=N` or `resolution=WxH`, as `haul get --hls-variant`.
    public var variant: String?
    /// Also make one playable file of the segments once all are here (AES-128 segments are
    /// decrypted for it). Default false.
    public var join: Bool
    /// Accept `EXT-X-KEY` URIs on another server than the playlist's. Default false: a
    /// playlist could otherwise make Haul fetch from any host.
    public var allowsKeysOnOtherHosts: Bool
    /// Headers for the document and every file; credentials (`Authorization`, `Cookie`) go to
    /// the document's own server only. Default none.
    public var headers: [HeaderField]

    /// Options; every default is stated on its property.
    public init(
        kind: Kind? = nil, variant: String? = nil, join: Bool = false, allowsKeysOnOtherHosts: Bool = false,
        headers: [HeaderField] = []
    ) {
        self.kind = kind
        self.variant = variant
        self.join = join
        self.allowsKeysOnOtherHosts = allowsKeysOnOtherHosts
        self.headers = headers
    }

    /// The planner's options (the variant parsed, the limits Haul's own).
    func hlsOptions() throws(HaulError) -> HLSOptions {
        var options = HLSOptions(join: join, allowsKeysOnOtherHosts: allowsKeysOnOtherHosts, headers: headers)
        if let variant { options.variant = try VariantChoice(parsing: variant) }
        return options
    }
}
