import Foundation

/// One download as the store keeps it: everything a new process needs to show it, continue it
/// from its durable bytes, or recognise that it already finished.
///
/// Resume state is plain fields (the seeds' lesson: opaque resume blobs break): URL, validator,
/// length, durable offset.
struct StoredDownload: Sendable, Hashable {
    var id: DownloadID
    /// The session the download belongs to (`BackgroundSession` identifiers; "default" otherwise).
    var session: String
    var group: String?
    /// Order of enqueueing within the store; queued downloads start in this order per priority.
    var position: Int64
    /// The request, with its URL as text: a batch of rows written at once does not hold a
    /// parsed `URL` per download (see `KeptRequest`).
    var kept: KeptRequest
    /// Names the part file `.haul-KEY.part` in the request's directory.
    var partKey: String
    var state: DownloadState
    var finalURL: URL?
    var validator: Validator?
    var expectedLength: Int64?
    /// Bytes at the start of the part file that were flushed to disk before this was written.
    var durableOffset: Int64
    /// Written just before the part file is renamed, so that recovery can tell "renamed, then
    /// crashed" from "part file lost".
    var placement: PlacementIntent?
    /// The placed file and what it looked like when placed, to notice later changes.
    var filePath: String?
    var fileSize: Int64?
    var fileModified: Date?
    var skipped: Bool
    var verifiedChecksums: [Checksum]
    var error: StoredError?
    var attempts: Int
    var createdAt: Date
    var updatedAt: Date
    /// The byte ranges of a segmented download with their durable offsets (the `segment`
    /// table). On save: nil leaves the stored segments as they are (state changes), an array
    /// replaces them (checkpoints; empty removes them). On load: nil when there are none.
    var segments: [DurableSegment]? = nil
}

extension StoredDownload {
    var request: DownloadRequest {
        get { kept.request }
        set { kept = KeptRequest(newValue) }
    }
}

/// Where a verified part file is about to be placed, and which file it is (device and inode
/// survive the rename), so that recovery can find it under whatever name it got.
struct PlacementIntent: Codable, Sendable, Hashable {
    var directory: String
    var name: String
    var policy: ConflictPolicy
    var device: UInt64
    var inode: UInt64
    var length: Int64
}

/// A download's placement intent, to be written on its own (`StoreWrite.recordPlacements`).
///
/// With `completion`, the intent goes with the row as it will be once the file is renamed
/// (state completed, the file's path, size and time, the intent among them): the one write
/// of a verified file, after which its rename needs none.
struct StoredPlacement: Sendable, Hashable {
    var id: DownloadID
    var intent: PlacementIntent
    var completion: StoredDownload? = nil
}

/// A download put into another group (`StoreWrite.moveToGroups`).
struct GroupMove: Sendable, Hashable {
    var id: DownloadID
    var group: String?
}

/// A `HaulError` as stored (its code by name).
struct StoredError: Codable, Sendable, Hashable {
    var code: String
    var message: String
    var httpStatus: Int?
}
