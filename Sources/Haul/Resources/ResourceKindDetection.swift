import Foundation

extension ResourcePlan.Kind {
    /// The kind a URL or file name announces by its extension: `.m3u8`/`.m3u` for HLS,
    /// `.meta4` for Metalink 4; nil for anything else.
    package init?(pathExtensionOf path: String) {
        switch (path as NSString).pathExtension.lowercased() {
        case "m3u8", "m3u": self = .hls
        case "meta4": self = .metalink
        default: return nil
        }
    }

    /// The kind a server announces by its Content-Type; nil for anything else.
    package init?(mediaType: String?) {
        guard let mediaType else { return nil }
        if HLSOptions.mediaTypes.contains(mediaType) {
            self = .hls
        } else if mediaType == "application/metalink4+xml" {
            self = .metalink
        } else {
            return nil
        }
    }
}
