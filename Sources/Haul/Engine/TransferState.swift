import Foundation

/// Everything a download carries from one HTTP attempt to the next: its part file, how many
/// bytes of it are good, what they are a prefix of, and the checksums of that prefix.
///
/// It is a value owned by exactly one party at a time: the manager between attempts, the
/// transfer task during one. That ownership is what guarantees a single writer per part file.
struct TransferState: Sendable {
    /// The request as it was when the download was added, except for options changed while
    /// it runs (its speed limit).
    var request: DownloadRequest
    var part: PartFile
    /// What the server said about the bytes in the part file.
    var entity: ResumePolicy.Entity?
    /// Bytes at the start of the part file that are good.
    var bytesOnDisk: Int64 = 0
    /// Digests of exactly `bytesOnDisk` bytes; nil when they must be rebuilt from the file.
    var hasher: StreamingHasher?
    var finalURL: URL?
    var contentDisposition: String?
    /// The byte ranges of a download split over several connections, nil for one connection.
    /// While set, `bytesOnDisk` is unused: each segment knows its own bytes.
    var segments: SegmentPlan?
    /// With `segments`: `hasher` has seen exactly bytes `0..<hashedLength` (the prefix that
    /// was hashed in flight); the rest is read back once, when every segment is complete.
    var hashedLength: Int64 = 0
    /// A segmented attempt found that ranges cannot be used for this file: from then on, one
    /// connection (for the life of this value, i.e. until the process restarts).
    var splitRefused = false
    /// Which of `request.urls` the first request of the next attempt goes to first: the one
    /// that answered last, or the next after a failure (`MirrorSet.next(after:count:error:)`).
    var sourceIndex = 0
    /// Which of `request.urls` answered the request that fixed `entity` (the validator's
    /// source), nil when not known. Only its answers may say the file changed; bytes from any
    /// other URI are appended only if it proves the same file (`ResumePolicy.provesSameFile`).
    /// After a restart it is the URI equal to the recorded final URL, if one is.
    var validatorSource: Int?

    /// Whether an answer from URI `index` must prove it serves the kept bytes' file: with
    /// mirrors, every URI but the validator's source. One URI keeps the rules it always had.
    func mustProveSameFile(_ index: Int) -> Bool {
        request.urls.count > 1 && index != validatorSource
    }

    /// A transfer that starts from nothing.
    init(request: DownloadRequest, partKey: String) {
        self.request = request
        self.part = PartFile(directory: request.directory.path, key: partKey)
        self.hasher = StreamingHasher(algorithms: Set(request.checksums.map(\.algorithm)))
    }

    /// A transfer continuing from a durable prefix recorded by an earlier process. The prefix
    /// is trusted only if the part file still holds at least that many bytes; anything past it
    /// is cut off before appending, and its digests are rebuilt by reading it once.
    ///
    /// With `segments` (a segmented download), each segment continues from its own durable
    /// offset, if the segments add up to the recorded length and the part file still reaches
    /// the last durable byte; otherwise they are ignored, and `durableOffset` (the bytes
    /// durable without a gap from the start) is all that is trusted.
    init(
        request: DownloadRequest, partKey: String, validator: Validator?, expectedLength: Int64?, durableOffset: Int64,
        finalURL: URL?, segments: [DurableSegment] = []
    ) {
        self.init(request: request, partKey: partKey)
        self.finalURL = finalURL
        guard let validator else { return }
        validatorSource = request.urls.count == 1 ? 0 : finalURL.flatMap { request.urls.firstIndex(of: $0) }
        sourceIndex = validatorSource ?? 0
        let size = part.existingSize()
        if let expectedLength, let size, let plan = SegmentPlan(resuming: segments, totalLength: expectedLength, minStealSize: 1),
           size >= segments.filter({ $0.durableOffset > $0.start }).map(\.durableOffset).max() ?? 0, plan.writtenBytes > 0 {
            entity = ResumePolicy.Entity(validator: validator, totalLength: expectedLength, isResumable: true)
            self.segments = plan
            return
        }
        guard durableOffset > 0, let size, size >= durableOffset else { return }
        entity = ResumePolicy.Entity(validator: validator, totalLength: expectedLength, isResumable: true)
        bytesOnDisk = durableOffset
        hasher = nil
    }

    var requestedAlgorithms: Set<Checksum.Algorithm> { Set(request.checksums.map(\.algorithm)) }

    /// Whether the part file holds bytes a later attempt (or process) may continue: some
    /// bytes, of a response with a strong validator.
    var keepsResumableBytes: Bool {
        entity?.isResumable == true && (bytesOnDisk > 0 || segments != nil)
    }

    /// Forgets every byte: the next attempt starts from zero.
    mutating func startOver() {
        bytesOnDisk = 0
        entity = nil
        hasher = StreamingHasher(algorithms: requestedAlgorithms)
        segments = nil
        hashedLength = 0
        validatorSource = nil
    }
}

/// A durable point of a transfer: the part file was flushed up to `durableOffset` before this
/// was reported, so recording it can never claim bytes that are not on the device.
///
/// For a segmented download, `durableOffset` is the length of the durable bytes without a gap
/// from the start (what one connection could resume from) and `segments` lists every
/// segment's durable offset; for one connection `segments` is empty. Both are recorded
/// together: a record whose segments are empty has none.
struct TransferCheckpoint: Sendable, Hashable {
    var durableOffset: Int64
    var validator: Validator?
    var expectedLength: Int64?
    var finalURL: URL?
    var segments: [DurableSegment] = []
}

/// How a transfer tells its owner what happened, without knowing who stores it.
struct TransferReporter: Sendable {
    /// The response arrived and bytes start flowing, from `resumedFrom`.
    var started: @Sendable (_ resumedFrom: Int64, _ finalURL: URL) -> Void
    /// A durable point was reached (see `TransferCheckpoint`).
    var checkpoint: @Sendable (TransferCheckpoint) async -> Void
    /// Bytes kept from before are given up and the file starts again from 0, for `reason`
    /// (the resume rules refused the server's answer): what a user needs to read in a log.
    var restartedFromZero: @Sendable (_ reason: String) -> Void = { _ in }
}

/// How one run of a transfer ended.
enum TransferResult: Sendable {
    case completed(Placement.Result, checksums: [Checksum], bytes: Int64)
    /// Every byte is here and verified; the manager records where the file goes and renames
    /// it, together with the other files verified at about the same time.
    case verified(VerifiedFile)
    case failed(HaulError)
    case stopped
}
