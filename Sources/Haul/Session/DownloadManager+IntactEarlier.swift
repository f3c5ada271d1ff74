import Foundation

/// Finding, before a batch is added, the files an earlier run of the same requests placed and
/// nobody changed since, so that a caller (`haul get`) can report them itself and add only
/// the rest.
///
/// Why: `add(_:toGroup:continuingExisting:)` recognises such a file too, but at the cost of a
/// whole download: its row read and decoded, a record built, the row moved into the new group
/// (a write), a `.completed` event. For a batch of 5,000 files all present that was most of a
/// re-run's time. Here a file costs a narrow row (`EarlierDownloadRow`) and a `stat`, and its
/// row is not written at all.
///
/// The answer is conservative: a request is found only when `add` would have found the same
/// download intact, so adding the others instead changes nothing of what happens to them.
/// Anything less simple is left to `add`: a request whose earlier download is unfinished (it
/// is continued there), one with several completed earlier downloads, a request made twice in
/// the batch, a download that skipped an existing file (`ConflictPolicy.skip`), and a row
/// that lacks the placed file's size or time, or whose placement intent's inode cannot be read.
extension DownloadManager {
    /// For each of `requests`, in order: the earlier completed download of this session that
    /// stands for it (same URL, directory, file name and checksums) and whose file is still
    /// the one placed (same size, modification time and, when the placement recorded it,
    /// inode), as a snapshot with its ID, path, bytes and checksums; nil for the others. One
    /// store query per directory; the rows found are not changed. Always nil when the manager
    /// keeps finished downloads in memory (`Retention.loadsEarlierFinished`).
    package func intactEarlierDownloads(of requests: [DownloadRequest]) async throws(HaulError) -> [DownloadInfo?] {
        guard finishedLeftInStore else { return [DownloadInfo?](repeating: nil, count: requests.count) }
        return try await Self.lookUpEarlier(of: requests, in: store, session: session).intact
    }

    /// What a look-up of earlier downloads found: the intact ones, and how the earlier
    /// downloads of the other requests sort (`sortEarlierFinished`), for `add` to take as is.
    package struct EarlierLookup: Sendable {
        /// For each request, in order: its intact earlier download, or nil.
        package var intact: [DownloadInfo?]
        /// The earlier finished downloads of the requests not found intact; nil when none
        /// were looked up (finished downloads are kept in memory).
        package var rest: EarlierFinished?
        /// The intact downloads counted as added before the look-up's `inUseCutoff`: found in
        /// use again, they are for the caller to mark so (`StoreWrite.markInUse`).
        var addedBeforeCutoff: [DownloadID] = []
    }

    /// `intactEarlierDownloads(of:)` on a store without a manager (see `EarlierRunStore`), with
    /// the earlier downloads of the other requests sorted from the same rows: one query per
    /// directory for both.
    /// `beforeReadingRows` runs once, before the first row is read, when a directory of the
    /// batch has rows at all (`EarlierRunStore` prunes there). Intact downloads counted as
    /// added before `inUseCutoff` are listed in `addedBeforeCutoff`.
    static func lookUpEarlier(
        of requests: [DownloadRequest], in store: any DownloadStoring, session: String, inUseCutoff: Date? = nil,
        beforeReadingRows: () async throws(HaulError) -> Void = {}
    ) async throws(HaulError) -> EarlierLookup {
        var found = [DownloadInfo?](repeating: nil, count: requests.count)
        var rest = EarlierFinished()
        let cutoff = inUseCutoff?.timeIntervalSinceReferenceDate
        var addedBeforeCutoff: [DownloadID] = []
        guard !requests.isEmpty else { return EarlierLookup(intact: found, rest: rest) }
        var directories = DirectoryCache()
        // Each request's normalised directory; the requests themselves are copied (normalised)
        // only when found intact, for their snapshot.
        let directoryOf = requests.map { directories.directory(of: $0) }
        // Each request's directory as stored, and whether the session ever used it: a batch
        // into a new directory (a fresh store, a run into a dated folder) costs one probe of
        // the index, not the identity and the look-up of each of its requests.
        // Each directory's text as stored when the session used it, nil when it never did.
        var probed: [URL: String?] = [:]
        var last: (directory: URL, text: String?)?
        // For each request, its directory's text when the session used that directory.
        var usedDirectory = [String?](repeating: nil, count: requests.count)
        // By index here and below: a `for request in` loop would copy each whole request.
        for index in requests.indices {
            let directory = directoryOf[index]
            // A batch nearly always shares one directory: found by comparing, not hashing.
            if let last, last.directory == directory {
                usedDirectory[index] = last.text
                continue
            }
            let text: String?
            if let known = probed[directory] {
                text = known
            } else {
                let stored = StoredURL.directoryText(directory)
                text = try await store.hasDownloads(session: session, directory: stored) ? stored : nil
                probed[directory] = text
            }
            last = (directory, text)
            usedDirectory[index] = text
        }
        guard usedDirectory.contains(where: { $0 != nil }) else { return EarlierLookup(intact: found, rest: rest) }
        try await beforeReadingRows()
        var identities = IdentityCache()
        // Each identity's request, by directory as stored; an identity asked for twice is left to `add`.
        var batches: [(text: String, path: String, directory: URL, indexes: [RequestIdentity: Int], urls: [String])] = []
        var batchOfText: [String: Int] = [:]
        var repeated: Set<RequestIdentity> = []
        // A batch nearly always shares one directory: its entry is found by comparing, not hashing.
        var lastBatch: (text: String, batch: Int)?
        for index in requests.indices {
            guard let text = usedDirectory[index] else { continue }
            let identity = identities.identity(ofRequest: requests[index], directory: directoryOf[index])
            let batch: Int
            if let lastBatch, lastBatch.text == text {
                batch = lastBatch.batch
            } else if let known = batchOfText[text] {
                batch = known
            } else {
                batch = batches.count
                batches.append((text, identity.directory, directoryOf[index], [:], []))
                batchOfText[text] = batch
            }
            lastBatch = (text, batch)
            if batches[batch].indexes.updateValue(index, forKey: identity) != nil {
                repeated.insert(identity)
            } else {
                // A URL may come twice (other names): the store's `IN` reads its rows once.
                batches[batch].urls.append(identity.url)
            }
        }
        let json = JSONColumns()
        // Each row's file is looked at once, whether it is asked if intact or if gone.
        var placed: [DownloadID: PlacedFile] = [:]
        func placedFile(_ row: EarlierDownloadRow) -> PlacedFile {
            if let known = placed[row.id] { return known }
            let found = Self.placedFile(of: row)
            placed[row.id] = found
            return found
        }
        for batch in batches {
            let rows = try await store.earlierDownloads(session: session, directory: batch.text, urls: batch.urls)
            // Each request's rows, together: sorted by request rather than kept in a
            // dictionary of arrays (an array allocated for each of 5,000 requests), and held
            // as their positions in `rows`, so that neither the sort nor the look at them
            // copies a row (a dozen references each).
            var rowsByRequest: [(index: Int, row: Int)] = []
            rowsByRequest.reserveCapacity(rows.count)
            for position in rows.indices {
                guard let checksums = try? Self.identityChecksums(rows[position].checksumsText, json) else { continue }
                let identity = RequestIdentity(
                    url: rows[position].url, directory: batch.path, fileName: rows[position].fileName, checksums: checksums)
                guard !repeated.contains(identity), let index = batch.indexes[identity] else { continue }
                rowsByRequest.append((index, position))
            }
            rowsByRequest.sort { $0.index < $1.index }
            var start = 0
            while start < rowsByRequest.count {
                let index = rowsByRequest[start].index
                var end = start + 1
                while end < rowsByRequest.count, rowsByRequest[end].index == index { end += 1 }
                if case let (info, addedAt)? = Self.intactDownload(
                    among: rowsByRequest[start..<end].lazy.map(\.row), of: rows, for: directories.normalized(requests[index]), json,
                    placedFile: placedFile) {
                    if let cutoff, addedAt < cutoff { addedBeforeCutoff.append(info.id) }
                    found[index] = info
                }
                start = end
            }
            // The rows of every URL asked for by a request not found intact, sorted as the
            // manager would sort them when that request reaches it.
            var restURLs: Set<String> = []
            for (identity, index) in batch.indexes where found[index] == nil { restURLs.insert(identity.url) }
            Self.sort(
                rows.filter { restURLs.contains($0.url) }, directory: (batch.text, batch.path, batch.directory), json,
                placedFile: placedFile, into: &rest)
        }
        return EarlierLookup(intact: found, rest: rest, addedBeforeCutoff: addedBeforeCutoff)
    }

    /// The download standing for a request among its earlier rows, when there is exactly one
    /// completed row, no unfinished one, and its file is intact, with when its row counts as
    /// added (`EarlierDownloadRow.createdAt`); else nil (left to `add`).
    private static func intactDownload(
        among positions: some Sequence<Int>, of rows: [EarlierDownloadRow], for request: DownloadRequest,
        _ json: JSONColumns, placedFile: (EarlierDownloadRow) -> PlacedFile
    ) -> (info: DownloadInfo, addedAt: Double)? {
        var completed: Int?
        for position in positions {
            switch rows[position].state {
            case .completed:
                guard completed == nil else { return nil }
                completed = position
            case .canceled:
                // Never continued; replaced only when a new download is made.
                continue
            case .queued, .running, .paused, .failed:
                return nil
            }
        }
        guard let completed else { return nil }
        let row = rows[completed]
        guard case .intact(let path) = placedFile(row),
              let checksums = try? json.decodeChecksums(row.verifiedChecksumsText)
        else { return nil }
        var info = DownloadInfo(id: row.id, request: request, group: row.group)
        info.state = .completed
        // As a record loaded from the row would say (`loadedRecord`).
        if let length = row.expectedLength {
            info.progress = TransferProgress(completedBytes: length, expectedBytes: length)
        } else {
            info.progress = TransferProgress(completedBytes: row.durableOffset)
        }
        // Without a redirect the final URL is the request's own: not parsed a second time.
        info.finalURL = row.finalURL.flatMap { $0 == row.url ? request.url : URL(string: $0) }
        info.fileURL = URL(fileURLWithPath: path, isDirectory: false)
        info.verifiedChecksums = checksums
        info.attempts = row.attempts
        return (info, row.createdAt)
    }

    /// What a completed row's placed file is now, from one `lstat`: what both the look-up of
    /// intact files and the sorting of spent downloads ask, so that a re-run looks at each
    /// file once.
    enum PlacedFile: Equatable {
        /// Still the one placed: the size and modification time recorded at placement, and the
        /// inode of the placement intent when the row has one.
        case intact(path: String)
        /// Not the one placed by the manager's own rule (`placedFileIsIntact`): no size or time
        /// recorded, the file gone, or another size or modification time.
        case gone
        /// Neither for sure: a file a `skip` left alone, or one whose inode cannot be compared
        /// or differs (a copy with the same size and time).
        case undecided
    }

    static func placedFile(of row: EarlierDownloadRow) -> PlacedFile {
        guard !row.skipped else { return .undecided }
        guard let path = row.filePath, let size = row.fileSize, let modified = row.fileModified,
              let now = SystemCalls.describe(path),
              now.size == size, abs(now.modified - StoredDate.date(modified).timeIntervalSince1970) < 0.001
        else { return .gone }
        guard !row.hasPlacement || row.inode != nil else { return .undecided }
        if let inode = row.inode, now.identity.inode != inode { return .undecided }
        return .intact(path: path)
    }

    /// Checksums as `RequestIdentity` holds them (sorted when several), from their column text.
    static func identityChecksums(_ text: String, _ json: JSONColumns) throws -> [Checksum] {
        RequestIdentity.canonical(try json.decodeChecksums(text))
    }
}
