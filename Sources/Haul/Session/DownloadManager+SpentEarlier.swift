import Foundation

/// Sorting a batch's earlier finished downloads, before any of them is loaded, into those a
/// new download will replace and those the manager must look at whole.
///
/// Why: a batch run again after its files were deleted (issue 26's job (g)) found each
/// earlier download by reading its whole row, decoding it and building a record, only to
/// delete that record and its row a moment later. That was most of what the re-run cost
/// beyond a first run: a fresh run into the same directory started its transfers at 0.12 s,
/// the re-run at 0.27 s. Here such a download costs a narrow row (`EarlierDownloadRow`, the
/// query `haul get` already makes for intact files) and a `stat`; only its ID is kept, for
/// the deletion.
///
/// The sorting is conservative: a download is called spent only when the manager, having
/// loaded it, would have replaced it too. Everything else at the same URL and directory is
/// loaded whole as before.
extension DownloadManager {
    /// The earlier finished downloads of a batch, as `sortEarlierFinished` found them: what
    /// `haul get`'s own look-up (`EarlierRunStore.lookUpEarlier`) hands on to the manager with
    /// the requests it did not find intact, so that they are not looked up twice.
    package struct EarlierFinished: Sendable {
        /// Downloads of the store that a new download of the same request replaces, by that
        /// request: canceled ones, and completed ones whose file is no longer as placed.
        var spent: [RequestIdentity: [DownloadID]] = [:]
        /// The URLs and directories whose earlier downloads must be loaded whole: one of them
        /// may be continued, taken in as completed, or placed from a `.done` file.
        var toLoad: Set<DownloadPlace> = []
    }

    /// Sorts the session's finished downloads of `requests` (normalised), skipping those in
    /// memory already. One query of the (session, directory, URL) index per directory.
    func sortEarlierFinished(of requests: [DownloadRequest]) async throws(HaulError) -> EarlierFinished {
        var sorted = EarlierFinished()
        var identities = IdentityCache()
        // Per directory as stored: its path as identities give it, and its URLs once each.
        var batches: [String: (path: String, directory: URL, urls: [String], seen: Set<String>)] = [:]
        var order: [String] = []
        for request in requests {
            let kept = KeptRequest(request)
            let text = StoredURL.directoryText(request.directory)
            if batches[text] == nil {
                batches[text] = (identities.identity(of: kept).directory, request.directory, [], [])
                order.append(text)
            }
            if batches[text]!.seen.insert(kept.urlText).inserted { batches[text]!.urls.append(kept.urlText) }
        }
        let json = JSONColumns()
        for text in order {
            guard let batch = batches[text] else { continue }
            let rows = try await store.earlierDownloads(session: session, directory: text, urls: batch.urls)
            let unloaded = rows.filter { !records.contains($0.id) }
            Self.sort(unloaded, directory: (text, batch.path, batch.directory), json, placedFile: Self.placedFile(of:), into: &sorted)
        }
        return sorted
    }

    /// Sorts the rows of one directory (as stored, as identities give it, and as a URL) into
    /// `sorted`: spent rows by their request's identity, unless their URL has a row to load.
    /// `placedFile` tells what a completed row's file is now (`placedFile(of:)`, or its answer
    /// kept from a look-up that asked already).
    static func sort(
        _ rows: [EarlierDownloadRow], directory: (text: String, path: String, url: URL), _ json: JSONColumns,
        placedFile: (EarlierDownloadRow) -> PlacedFile, into sorted: inout EarlierFinished
    ) {
        guard !rows.isEmpty else { return }
        // A dead process may have left verified files here (`.haul-KEY.done`) for completed
        // rows whose file is not in place yet: then every such row is loaded whole, so that it
        // is placed (`finishInterruptedPlacements`) and not replaced.
        var verifiedLeft: Bool?
        var spentHere: [(url: String, identity: RequestIdentity, id: DownloadID)] = []
        var loadURLs: Set<String> = []
        for row in rows {
            let spent: Bool
            switch row.state {
            case .canceled: spent = true
            case .completed:
                if verifiedLeft == nil { verifiedLeft = !PartFile.verifiedKeys(inDirectory: directory.url.path).isEmpty }
                spent = verifiedLeft == false && placedFile(row) == .gone
            case .failed: spent = false
            // Unfinished downloads are in memory from the start.
            case .queued, .running, .paused: continue
            }
            if spent, let checksums = try? identityChecksums(row.checksumsText, json) {
                let identity = RequestIdentity(url: row.url, directory: directory.path, fileName: row.fileName, checksums: checksums)
                spentHere.append((row.url, identity, row.id))
            } else {
                loadURLs.insert(row.url)
            }
        }
        for url in loadURLs { sorted.toLoad.insert(DownloadPlace(url: url, directory: directory.text)) }
        // A URL with a row to load is loaded whole, its spent rows too, as before.
        for entry in spentHere where !loadURLs.contains(entry.url) {
            sorted.spent[entry.identity, default: []].append(entry.id)
        }
    }
}
