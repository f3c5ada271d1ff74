import Foundation

/// An earlier download of a URL into a directory, narrowed to what tells whether its file is
/// still the one that was placed: its identity (URL, name asked for, checksums), its state,
/// and the placed file's path, size, modification time and inode as recorded at placement;
/// with what a run reports for a file it finds intact (ID, bytes, final URL, checksums).
///
/// Why narrow: a run of `haul get` with every file still present read each earlier download
/// whole (`finished(session:matching:)`), decoded its JSON columns and built a record of it,
/// only to find that nothing needed doing. Read this way, a file found intact costs one row of
/// a dozen plain columns and a `stat` (see `DownloadManager+IntactEarlier`). The JSON columns
/// are kept as text: a batch without checksums has `[]` there, decoded for free.
struct EarlierDownloadRow: Sendable, Hashable {
    var id: DownloadID
    /// `KeptRequest.urlText`.
    var url: String
    var position: Int64
    var group: String?
    var state: DownloadState
    /// The name the request asked for, if any.
    var fileName: String?
    /// The request's checksums, as stored (`JSONColumns`).
    var checksumsText: String
    var filePath: String?
    var fileSize: Int64?
    /// Seconds since Foundation's reference date, as stored (`StoredDate`).
    var fileModified: Double?
    /// The conflict policy `skip` found the name taken: the file there is not Haul's.
    var skipped: Bool
    /// Whether the row carries a placement intent; `inode` is its inode when it could be read.
    var hasPlacement: Bool
    var inode: UInt64?
    var expectedLength: Int64?
    var durableOffset: Int64
    var finalURL: String?
    /// The digests verified before placement, as stored (`JSONColumns`).
    var verifiedChecksumsText: String
    var attempts: Int
    /// When the download counts as added, for the retention rule, in seconds since
    /// Foundation's reference date, as stored (`StoredDate`): a re-run that finds its file
    /// intact long after marks it in use again (`StoreWrite.markInUse`).
    var createdAt: Double
}
