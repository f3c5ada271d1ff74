import Foundation

/// The end of a transfer: its bytes checked against the request, and the file put in place
/// under its final name, recorded first so that a crash right after the rename is recognised.
extension TransferRunner {
    /// Checks length and every requested checksum, then places the part file atomically.
    func verifyAndPlace(_ state: inout TransferState, reporter: TransferReporter) async throws(HaulError) -> TransferResult {
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
        state.part.close()
        let name = FileNaming.resolveName(
            requested: state.request.fileName, contentDisposition: state.contentDisposition,
            originalURL: state.request.url, finalURL: state.finalURL)
        // Recorded first, so that a crash right after the rename is recognised as a completed
        // download (found by its inode) and not fetched a second time.
        try await reporter.willPlace(PlacementIntent(
            directory: state.request.directory.path, name: name, policy: state.request.conflictPolicy,
            device: identity.device, inode: identity.inode, length: state.bytesOnDisk))
        let placed = try Placement.place(
            partPath: state.part.path, directory: state.request.directory.path, name: name,
            policy: state.request.conflictPolicy)
        return .completed(placed, checksums: computed, bytes: state.bytesOnDisk)
    }

    /// With `.skip` or `.fail` and a name known before any byte is fetched, decide now
    /// instead of downloading a file that cannot be placed. Returns the skip result, if any.
    func conflictUpfront(_ request: DownloadRequest) throws(HaulError) -> Placement.Result? {
        guard let name = request.fileName, request.conflictPolicy == .fail || request.conflictPolicy == .skip else { return nil }
        let target = Placement.join(request.directory.path, name)
        guard SystemCalls.fileExists(target) else { return nil }
        if request.conflictPolicy == .skip { return Placement.Result(path: target, skipped: true) }
        throw HaulError(.fileExists, "\(target) already exists; choose another name or conflict policy")
    }
}
