import Foundation

/// A file Haul placed: where it is, how long it is, and the checksums it was verified against.
///
/// A download's result when it completed (`Download.value`, `DownloadResult.Outcome.completed`).
/// Haul reports a file only after its length and every requested checksum matched and it was
/// moved into place by an atomic rename, so the bytes at `url` are whole.
public struct DownloadedFile: Sendable, Hashable {
    /// Where the file was placed (in the request's directory).
    public let url: URL
    /// Its length in bytes, as verified.
    public let length: Int64
    /// The digests computed while the bytes streamed in, one per algorithm the request named
    /// (`DownloadRequest.checksums`); each matched the expected value. Empty when none was asked.
    public let checksums: [Checksum]
    /// True when the request's conflict policy was `.skip` and a file already had the name: it
    /// was left as it was and nothing was fetched.
    public let skipped: Bool

    /// A placed file.
    public init(url: URL, length: Int64, checksums: [Checksum] = [], skipped: Bool = false) {
        self.url = url
        self.length = length
        self.checksums = checksums
        self.skipped = skipped
    }
}
