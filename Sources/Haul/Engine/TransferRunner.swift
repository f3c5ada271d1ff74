import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// Tests only: decides, from the offset about to be written, whether a write fails.
struct WriteFault: Sendable {
    let error: @Sendable (_ offset: Int64) -> HaulError?
}

/// Performs one attempt of a download: request (resuming when the rules allow), stream to the
/// part file while hashing, checkpoint, verify, and place atomically.
///
/// It never decides about retries or states; it reports what happened and leaves the part
/// file and `TransferState` ready for the next attempt.
struct TransferRunner: Sendable {
    let transport: HTTPTransport
    /// Flush and record the durable offset after this many bytes…
    let checkpointBytes: Int64
    /// …or after this long, whichever comes first.
    let checkpointInterval: Duration
    /// Files at least this large are flushed before placement; smaller ones are cheap to fetch
    /// again and flushing each of thousands would dominate the run.
    let syncBeforePlacementThreshold: Int64
    /// Tests only: an error to raise instead of writing at a given offset (a full disk, say).
    var writeFault: WriteFault?

    func run(_ state: inout TransferState, live: LiveTransfer, reporter: TransferReporter) async -> TransferResult {
        do {
            let result = try await attempt(&state, live: live, reporter: reporter)
            state.part.close()
            return result
        } catch {
            await checkpointIfPossible(state, reporter: reporter)
            state.part.close()
            if Task.isCancelled { return .stopped }
            if error.code == .canceled {
                // Cancelled inside the HTTP client, not by Haul: a broken transfer, retried.
                return .failed(HaulError(.connectionFailed, error.message))
            }
            return .failed(error)
        }
    }

    private func attempt(_ state: inout TransferState, live: LiveTransfer, reporter: TransferReporter) async throws(HaulError) -> TransferResult {
        if let existing = try conflictUpfront(state.request) {
            return .completed(existing, checksums: [], bytes: 0)
        }

        if state.entity?.isResumable == true, let total = state.entity?.totalLength, total > 0, state.bytesOnDisk == total {
            // Every byte is here but the file was not placed (stopped just before the rename,
            // or placement failed). A range past the end would get 416 and a whole new
            // download; asking for the last byte again revalidates the file instead.
            state.bytesOnDisk = total - 1
            state.hasher = nil
        }
        var offset = state.entity?.isResumable == true ? state.bytesOnDisk : 0
        var response: HTTPTransport.Response
        var decision: ResumePolicy.Decision
        while true {
            let headers = state.request.headers + ResumePolicy.rangeHeaders(offset: offset, validator: state.entity?.validator)
            response = try await transport.get(state.request.url, headers: headers)
            decision = ResumePolicy.decide(
                requestedOffset: offset, previous: state.entity, status: response.status,
                header: response.header, url: response.finalURL.absoluteString)
            guard case .requestAgainWithoutRange = decision, offset > 0 else { break }
            _ = try? await response.body.collect(upTo: 64 * 1024)
            offset = 0
        }

        switch decision {
        case .fail(let error):
            // An error body is never saved; the bytes already on disk stay for a later resume.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            throw error
        case .requestAgainWithoutRange(let reason):
            throw HaulError(.invalidResponse, "\(response.finalURL): \(reason)")
        case .append(let resumeOffset):
            precondition(resumeOffset == state.bytesOnDisk, "resume offset and part length disagree")
            // Anything past the recorded offset is not trusted: cut it before appending.
            try state.part.open(truncatingTo: state.bytesOnDisk)
            if state.hasher == nil { state.hasher = try await rebuildHasher(state) }
        case .writeFromStart:
            try state.part.open(truncatingTo: 0)
            let hadBytes = state.bytesOnDisk > 0
            state.startOver()
            state.entity = ResumePolicy.entity(status: response.status, header: response.header)
            offset = 0
            if hadBytes {
                // The recorded prefix is gone; say so before new bytes could be mistaken for it.
                await reporter.checkpoint(TransferCheckpoint(
                    durableOffset: 0, validator: state.entity?.validator,
                    expectedLength: state.entity?.totalLength, finalURL: response.finalURL))
            }
        }
        state.finalURL = response.finalURL
        state.contentDisposition = response.header("content-disposition")
        let expected = state.entity?.totalLength
        live.reset(completedBytes: state.bytesOnDisk, expectedBytes: expected)
        reporter.started(offset, response.finalURL)

        try await stream(response.body, into: &state, expected: expected, live: live, reporter: reporter)

        if let expected, state.bytesOnDisk != expected {
            throw HaulError(.lengthMismatch, "\(response.finalURL) announced \(expected) bytes but sent \(state.bytesOnDisk)")
        }
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
        if state.bytesOnDisk >= syncBeforePlacementThreshold { try await sync(state.part) }
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

    /// Writes the body, hashing and counting each buffer, with periodic checkpoints.
    private func stream(
        _ body: HTTPClientResponse.Body, into state: inout TransferState, expected: Int64?, live: LiveTransfer,
        reporter: TransferReporter
    ) async throws(HaulError) {
        let clock = ContinuousClock()
        var lastCheckpointBytes = state.bytesOnDisk
        var lastCheckpointTime = clock.now
        do {
            for try await buffer in body {
                let count = buffer.readableBytes
                if let expected, state.bytesOnDisk + Int64(count) > expected {
                    throw HaulError(.lengthMismatch, "\(state.finalURL?.absoluteString ?? "the server") sent more than the \(expected) bytes it announced")
                }
                if let writeFault, let error = writeFault.error(state.bytesOnDisk) { throw error }
                try state.part.write(buffer)
                state.hasher?.update(buffer)
                state.bytesOnDisk += Int64(count)
                live.add(count)
                if state.entity?.isResumable == true,
                   state.bytesOnDisk - lastCheckpointBytes >= checkpointBytes
                    || lastCheckpointTime.duration(to: clock.now) >= checkpointInterval {
                    try await checkpoint(state, reporter: reporter)
                    lastCheckpointBytes = state.bytesOnDisk
                    lastCheckpointTime = clock.now
                }
            }
        } catch let error as HaulError {
            throw error
        } catch {
            let url = state.finalURL ?? state.request.url
            let mapped = HTTPTransport.map(error, url: url)
            if mapped.code == .connectionFailed, let expected {
                throw HaulError(.connectionFailed, "\(url): connection lost after \(state.bytesOnDisk) of \(expected) bytes (\(mapped.message))")
            }
            throw mapped
        }
    }

    /// Data before metadata: flush the part file, then report the offset it now guarantees.
    private func checkpoint(_ state: TransferState, reporter: TransferReporter) async throws(HaulError) {
        guard let entity = state.entity, entity.isResumable, entity.validator != nil else { return }
        try await sync(state.part)
        await reporter.checkpoint(TransferCheckpoint(
            durableOffset: state.bytesOnDisk, validator: entity.validator,
            expectedLength: entity.totalLength, finalURL: state.finalURL))
    }

    /// fsync can take long on a busy disk: it runs on NIO's thread pool, not on one of the few
    /// cooperative threads that every transfer shares.
    private func sync(_ part: PartFile) async throws(HaulError) {
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
    private func checkpointIfPossible(_ state: TransferState, reporter: TransferReporter) async {
        guard state.part.isOpen, state.bytesOnDisk > 0 else { return }
        // A failed flush leaves the last recorded checkpoint in place, which is still true.
        await Task { try? await checkpoint(state, reporter: reporter) }.value
    }

    /// Reads the kept prefix once, off the cooperative threads, to continue the digests.
    private func rebuildHasher(_ state: TransferState) async throws(HaulError) -> StreamingHasher {
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

    /// With `.skip` or `.fail` and a name known before any byte is fetched, decide now
    /// instead of downloading a file that cannot be placed. Returns the skip result, if any.
    private func conflictUpfront(_ request: DownloadRequest) throws(HaulError) -> Placement.Result? {
        guard let name = request.fileName, request.conflictPolicy == .fail || request.conflictPolicy == .skip else { return nil }
        let target = Placement.join(request.directory.path, name)
        guard SystemCalls.fileExists(target) else { return nil }
        if request.conflictPolicy == .skip { return Placement.Result(path: target, skipped: true) }
        throw HaulError(.fileExists, "\(target) already exists; choose another name or conflict policy")
    }
}
