import Foundation

/// The end of a transfer: its bytes checked against the request and the part file closed,
/// ready to be put in place under its final name.
extension TransferRunner {
    /// Checks length and every requested checksum and decides the file's name. The rename is
    /// not done here: the manager records the intent first (so that a crash right after the
    /// rename is recognised) and places every file verified at about the same time after one
    /// store write, so that a batch of small files shares one write and one turn of the manager
    /// instead of each waiting for its own.
    func verify(_ state: inout TransferState) async throws(HaulError) -> TransferResult {
        let computed = state.hasher?.finalize() ?? []
        for wanted in state.request.checksums {
            guard let got = computed.first(where: { $0.algorithm == wanted.algorithm }), got == wanted else {
                // Wrong bytes are worth nothing: the next attempt must start from zero.
                state.part.close()
                state.part.discard()
                state.startOver()
                let actual = computed.first(where: { $0.algorithm == wanted.algorithm })?.hex ?? "?"
                throw HaulError(.checksumMismatch, "\(state.request.url): \(wanted.algorithm.rawValue) is \(actual), expected \(wanted.hex)")
            }
        }
        if state.bytesOnDisk >= syncBeforePlacementThreshold { try await Self.sync(state.part) }
        let marked = Self.nameNeedsNoResponse(state)
        if marked {
            // From here a kill loses nothing: a new process places `.done` files it finds
            // (the name it would give is this one), instead of fetching them again.
            try state.part.markVerified()
        }
        // The verified file keeps the part open, and so locked, until it has been renamed: handed
        // on, not closed. Let go after the rename above (which moves the file's change time), so that a
        // later attempt still sees it as the file this transfer left (`reopenToContinue`).
        // Described in the same look: a rename changes neither identity, size nor time.
        let part = state.part
        let described = try state.part.describeAndHandOver()
        let name = FileNaming.resolveName(
            requested: state.request.fileName, contentDisposition: state.contentDisposition,
            originalURL: state.request.url, finalURL: state.finalURL)
        // The part file's directory is the request's (`TransferState`), as a path already:
        // taking a `URL`'s path per file costs more than its rename.
        let intent = PlacementIntent(
            directory: part.directoryPath, name: name, policy: state.request.conflictPolicy,
            device: described.identity.device, inode: described.identity.inode, length: state.bytesOnDisk)
        return .verified(VerifiedFile(
            intent: intent, part: part, isMarkedVerified: marked, checksums: computed, bytes: state.bytesOnDisk,
            stamp: Placement.Stamp(size: described.size, modified: described.modified)))
    }

    /// Whether the file's name follows from its request alone (a name asked for, or the URL's
    /// when there was neither a Content-Disposition nor a redirect): what a new process must
    /// know to place a verified part file without the response (`DownloadManager+Recovery`).
    static func nameNeedsNoResponse(_ state: TransferState) -> Bool {
        state.request.fileName != nil
            || (state.contentDisposition == nil && (state.finalURL == nil || state.finalURL == state.request.url))
    }

    /// With `.skip` or `.fail` and a name known before any byte is fetched, decide now
    /// instead of downloading a file that cannot be placed. Returns the skip result, if any.
    func conflictUpfront(_ request: DownloadRequest) throws(HaulError) -> Placement.Result? {
        guard let name = request.fileName, request.conflictPolicy == .fail || request.conflictPolicy == .skip else { return nil }
        let target = Placement.join(request.directory.path, name)
        guard SystemCalls.fileExists(target) else { return nil }
        if request.conflictPolicy == .skip { return Placement.Result(path: target, skipped: true).stamped() }
        throw HaulError(.fileExists, "\(target) already exists; choose another name or conflict policy")
    }
}

/// A part file whose bytes are all verified, and where it goes.
struct VerifiedFile: Sendable {
    /// Recorded durably before the rename.
    let intent: PlacementIntent
    /// Still open and locked: no other writer can touch it before the rename.
    let part: PartFile
    /// Renamed to `part.verifiedName` (`PartFile.markVerified`).
    let isMarkedVerified: Bool
    /// The digests computed while the bytes arrived (those requested were checked).
    let checksums: [Checksum]
    let bytes: Int64
    /// Size and modification time read before the rename, which changes neither.
    let stamp: Placement.Stamp

    /// Where the file lands if its name is free (or replaced): what the store records with the
    /// intent before the rename, so that the rename needs no write of its own.
    var expectedPath: String { Placement.join(intent.directory, intent.name) }

    /// Renames the part file into place under the intent's name and conflict policy. A file
    /// that cannot be placed goes back to being a part file (`keepAsPart`).
    func place() -> TransferResult {
        do {
            var placed = try Placement.place(
                part, from: isMarkedVerified ? part.verifiedName : part.name, name: intent.name, policy: intent.policy)
            // A skipped file is someone else's: its own size and time are looked at.
            placed = placed.skipped ? placed.stamped() : Placement.Result(path: placed.path, skipped: false, stamp: stamp)
            return .completed(placed, checksums: checksums, bytes: bytes)
        } catch {
            keepAsPart()
            return .failed(error)
        }
    }

    /// The file will not be placed now (its intent was not recorded, or its name is taken):
    /// a verified file is renamed back to its part file, where the next attempt of its
    /// download expects its bytes (and a new process trusts a `.part` with nothing).
    func keepAsPart() {
        if isMarkedVerified { part.unmarkVerified() }
    }

    /// The file as it is now, while this value still holds it open: after `keepAsPart` (whose
    /// rename moves the change time), what the transfer records as the file it left
    /// (`PartFile.lastSeen`), so that a later attempt continues its bytes.
    func currentStatus() -> SystemCalls.EntryStatus? {
        guard let handle = part.handle else { return nil }
        let path = part.path
        return try? handle.withDescriptor(path: path) { descriptor throws(HaulError) in try SystemCalls.status(descriptor, path: path) }
    }
}
