/// Bounds on what a playlist or Metalink document may ask for. Documents are untrusted input:
/// each bound turns a hostile or broken document into a clear error before anything is queued
/// or written, instead of unbounded memory, requests or files. `docs/playlists.md` lists them.
package struct ResourceLimits: Sendable, Hashable, Codable {
    /// Largest document read (playlist or Metalink), in bytes.
    package var maxDocumentBytes: Int
    /// Most segments in one media playlist.
    package var maxSegments: Int
    /// Most files one resource downloads (segments, initialization sections, keys, Metalink files).
    package var maxFiles: Int
    /// Most media playlists one master playlist leads to (the variant and its renditions).
    package var maxMediaPlaylists: Int
    /// Longest line of a playlist, in bytes.
    package var maxLineBytes: Int

    package init(
        maxDocumentBytes: Int = 16 << 20, maxSegments: Int = 100_000, maxFiles: Int = 200_000,
        maxMediaPlaylists: Int = 32, maxLineBytes: Int = 64 << 10
    ) {
        self.maxDocumentBytes = maxDocumentBytes
        self.maxSegments = maxSegments
        self.maxFiles = maxFiles
        self.maxMediaPlaylists = maxMediaPlaylists
        self.maxLineBytes = maxLineBytes
    }
}
