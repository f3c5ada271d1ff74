import Foundation

/// Finishing the placements a dead process left undone.
///
/// A transfer renames its part file to `.haul-KEY.done` once every byte is verified
/// (`PartFile.markVerified`), and only then gives its slot to the next download; the store
/// learns of the file with its placement, one write for a batch of files. A kill -9 in
/// between leaves `.done` files whose rows say nothing yet (or, after that write, say
/// completed at a path the file never reached). Fetching them again would cost a batch's
/// worth of files; instead a new process puts each in place as the dead one would have:
/// its intent is written first (as always before a rename), then it is renamed by its
/// conflict policy, and its download is completed, found so by the usual recovery
/// (`findPlaced`). A `.part` file proves nothing about its bytes and is never placed.
extension DownloadManager {
    /// Places the `.done` files of `rows` for which `candidate` is true (and which have one),
    /// and updates those rows as if the dead process had finished: an unfinished row gets the
    /// intent the file was renamed by (recovery then finds the file placed), a completed one
    /// the path the rename gave. Returns the IDs of completed rows whose path changed. With
    /// `lease` (a fleet member's takeover), the intents are written fenced by it: nothing is
    /// renamed unless the lease still holds.
    func finishInterruptedPlacements(
        _ rows: inout [StoredDownload], fencedBy lease: DownloadLease? = nil, where candidate: (StoredDownload) -> Bool
    ) async -> Set<DownloadID> {
        var found: [(index: Int, part: PartFile, intent: PlacementIntent)] = []
        for index in rows.indices where candidate(rows[index]) {
            let row = rows[index]
            // Opened as the directory's own entry and locked, as any part file: a link or a
            // file of someone else's under the name is never placed.
            var part = PartFile(directory: row.kept.directory.path, key: row.partKey)
            part.followsDirectoryLinks = !configuration.refusesLinksInDirectories
            guard (try? part.acquire(creating: false, verified: true)) == true,
                  let verified = try? part.describe(),
                  let intent = Self.intent(for: row, verified: (verified.identity, verified.size))
            else { continue }
            found.append((index, part, intent))
        }
        guard !found.isEmpty else { return [] }
        // As before any rename: where it goes, durable first.
        let placements = found.map { StoredPlacement(id: rows[$0.index].id, intent: $0.intent) }
        do {
            if let lease {
                try await store.submit([.recordPlacements(placements)], fencedBy: lease)
            } else {
                try await store.save([], placements: placements, events: [], session: session)
            }
        } catch {
            return []
        }
        var moved: Set<DownloadID> = []
        for (index, part, intent) in found {
            guard let placed = try? Placement.place(part, from: part.verifiedName, name: intent.name, policy: intent.policy) else {
                part.unmarkVerified()
                continue
            }
            rows[index].placement = intent
            guard rows[index].state.isTerminal else { continue }
            let stamp = placed.stamped().stamp
            rows[index].filePath = placed.path
            rows[index].skipped = placed.skipped
            rows[index].fileSize = stamp?.size
            rows[index].fileModified = stamp.map { Date(timeIntervalSince1970: $0.modified) }
            moved.insert(rows[index].id)
        }
        return moved
    }

    /// The rows among `rows` whose directory holds their `.done` file, found by listing each
    /// directory once (a stat per row would cost as much as the backlog is long).
    static func rowsWithVerifiedFiles(_ rows: [StoredDownload]) -> Set<DownloadID> {
        var keysByDirectory: [URL: Set<String>] = [:]
        var found: Set<DownloadID> = []
        for row in rows {
            let directory = row.kept.directory
            let keys = keysByDirectory[directory] ?? {
                let keys = PartFile.verifiedKeys(inDirectory: directory.path)
                keysByDirectory[directory] = keys
                return keys
            }()
            if keys.contains(row.partKey) { found.insert(row.id) }
        }
        return found
    }

    /// Where a `.done` file of `row` goes: by the row's intent when it names this very file,
    /// else as its transfer would have named it (the request's name or its URL's: a file
    /// named by its response is never marked `.done`), with the file's own identity.
    private static func intent(for row: StoredDownload, verified: (identity: SystemCalls.FileIdentity, size: Int64)) -> PlacementIntent? {
        if let recorded = row.placement,
           SystemCalls.FileIdentity(device: recorded.device, inode: recorded.inode) == verified.identity,
           recorded.length == verified.size {
            return recorded
        }
        let request = row.kept.request
        let name = FileNaming.resolveName(
            requested: request.fileName, contentDisposition: nil, originalURL: request.url, finalURL: nil)
        return PlacementIntent(
            directory: request.directory.path, name: name, policy: request.conflictPolicy,
            device: verified.identity.device, inode: verified.identity.inode, length: verified.size)
    }
}
