import Foundation

/// Everything a download carries from one HTTP attempt to the next: its part file, how many
/// bytes of it are good, what they are a prefix of, and the checksums of that prefix.
///
/// It is a value owned by exactly one party at a time: the manager between attempts, the
/// transfer task during one. That ownership is what guarantees a single writer per part file.
struct TransferState: Sendable {
    let request: DownloadRequest
    var part: PartFile
    /// Whether the resume record on disk has been consulted (once per process).
    var consultedResumeRecord = false
    /// What the server said about the bytes in the part file.
    var entity: ResumePolicy.Entity?
    /// Bytes at the start of the part file that are good.
    var bytesOnDisk: Int64 = 0
    /// Digests of exactly `bytesOnDisk` bytes; nil when they must be rebuilt from the file.
    var hasher: StreamingHasher?
    var finalURL: URL?
    var contentDisposition: String?

    init(request: DownloadRequest, partKey: String) {
        self.request = request
        self.part = PartFile(directory: request.directory.path, key: partKey)
    }

    var requestedAlgorithms: Set<Checksum.Algorithm> { Set(request.checksums.map(\.algorithm)) }

    /// Forgets every byte: the next attempt starts from zero.
    mutating func startOver() {
        bytesOnDisk = 0
        entity = nil
        hasher = StreamingHasher(algorithms: requestedAlgorithms)
    }
}

/// How one run of a transfer ended.
enum TransferResult: Sendable {
    case completed(Placement.Result, checksums: [Checksum], bytes: Int64)
    case failed(HaulError)
    case stopped
}
