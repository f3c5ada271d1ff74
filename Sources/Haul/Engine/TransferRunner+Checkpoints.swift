import Foundation
import NIOPosix

/// Making what a transfer received durable (checkpoints) and continuing its digests from what
/// an earlier attempt kept: the part file's side of `TransferRunner`.
extension TransferRunner {
    /// Data before metadata: flush the part file, then report the offset it now guarantees
    /// (for a segmented download, every segment's).
    func checkpoint(_ state: TransferState, reporter: TransferReporter) async throws(HaulError) {
        guard let entity = state.entity, entity.isResumable, entity.validator != nil else { return }
        if var plan = state.segments {
            let offsets = plan.writtenOffsets
            try await Self.sync(state.part)
            plan.markDurable(offsets)
            await reporter.checkpoint(TransferCheckpoint(
                durableOffset: plan.contiguousDurablePrefix, validator: entity.validator,
                expectedLength: entity.totalLength, finalURL: state.finalURL, segments: plan.durableSegments))
            return
        }
        try await Self.sync(state.part)
        await reporter.checkpoint(TransferCheckpoint(
            durableOffset: state.bytesOnDisk, validator: entity.validator,
            expectedLength: entity.totalLength, finalURL: state.finalURL))
    }

    /// fsync can take long on a busy disk: it runs on NIO's thread pool, not on one of the few
    /// cooperative threads that every transfer shares.
    static func sync(_ part: PartFile) async throws(HaulError) {
        do {
            try await NIOThreadPool.singleton.runIfActive { try part.sync() }
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot flush \(part.path): \(error)")
        }
    }

    /// On a stop or failure, make what was received resumable by a later process too.
    ///
    /// A stop arrives as task cancellation, which would also cancel the flush and the store
    /// write; the final checkpoint runs in a task of its own so that it is not lost.
    func checkpointIfPossible(_ state: TransferState, reporter: TransferReporter) async {
        guard state.part.isOpen, state.bytesOnDisk > 0 || state.segments != nil else { return }
        // A failed flush leaves the last recorded checkpoint in place, which is still true.
        await Task { try? await checkpoint(state, reporter: reporter) }.value
    }

    /// Reads the kept prefix once, off the cooperative threads, to continue the digests.
    func rebuildHasher(_ state: TransferState) async throws(HaulError) -> StreamingHasher {
        let algorithms = state.requestedAlgorithms
        var hasher = StreamingHasher(algorithms: algorithms)
        guard !hasher.isEmpty, state.bytesOnDisk > 0 else { return hasher }
        let part = state.part
        let length = state.bytesOnDisk
        do {
            hasher = try await NIOThreadPool.singleton.runIfActive {
                var hasher = StreamingHasher(algorithms: algorithms)
                try part.hashPrefix(length, into: &hasher)
                return hasher
            }
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot read \(part.path) to rebuild its checksums: \(error)")
        }
        return hasher
    }
}
