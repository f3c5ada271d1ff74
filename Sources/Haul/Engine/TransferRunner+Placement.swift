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
        let identity = try state.part.identity()
        // The verified file keeps the part open, and so locked, until it has been renamed.
        let part = state.part
        state.part.close()
        let name = FileNaming.resolveName(
            requested: state.request.fileName, contentDisposition: state.contentDisposition,
            originalURL: state.request.url, finalURL: state.finalURL)
        let intent = PlacementIntent(
            directory: state.request.directory.path, name: name, policy: state.request.conflictPolicy,
            device: identity.device, inode: identity.inode, length: state.bytesOnDisk)
        return .verified(VerifiedFile(intent: intent, part: part, checksums: computed, bytes: state.bytesOnDisk))
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
    /// The digests computed while the bytes arrived (those requested were checked).
    let checksums: [Checksum]
    let bytes: Int64

    /// Renames the part file into place under the intent's name and conflict policy.
    func place() -> TransferResult {
        do {
            let placed = try Placement.place(part, name: intent.name, policy: intent.policy)
            return .completed(placed.stamped(), checksums: checksums, bytes: bytes)
        } catch {
            return .failed(error)
        }
    }
}
