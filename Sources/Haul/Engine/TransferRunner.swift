import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// Tests only: decides, from the offset about to be written, whether a write fails.
struct WriteFault: Sendable {
    let error: @Sendable (_ offset: Int64) -> HaulError?
}

/// Performs one attempt of a download: request (resuming when the rules allow), stream to the
/// part file while hashing, checkpoint, and verify; the manager places the verified file. A
/// download the server lets split is handed to `SegmentedTransfer` after the first response.
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
    /// When and how far downloads are split over several connections.
    let segmentation: SegmentationSettings
    /// The limit all transfers of the manager share (unlimited unless set).
    let globalLimit: SpeedLimiter
    /// Tests only: an error to raise instead of writing at a given offset (a full disk, say).
    var writeFault: WriteFault?
    /// Open download directories without following links (`PartFile.followsDirectoryLinks`).
    var refusesLinksInDirectories = false

    init(
        transport: HTTPTransport, checkpointBytes: Int64, checkpointInterval: Duration, syncBeforePlacementThreshold: Int64,
        segmentation: SegmentationSettings = .singleConnection, globalLimit: SpeedLimiter = SpeedLimiter(bytesPerSecond: nil),
        writeFault: WriteFault? = nil, refusesLinksInDirectories: Bool = false
    ) {
        self.transport = transport
        self.checkpointBytes = checkpointBytes
        self.checkpointInterval = checkpointInterval
        self.syncBeforePlacementThreshold = syncBeforePlacementThreshold
        self.segmentation = segmentation
        self.globalLimit = globalLimit
        self.writeFault = writeFault
        self.refusesLinksInDirectories = refusesLinksInDirectories
    }

    /// How one round of requests ended, short of verification and placement.
    private enum FetchEnd {
        /// Every byte is in the part file and `state.hasher` has seen them all.
        case complete
        /// The file changed under a segmented transfer; `state` starts over.
        case restarted
        /// Ranges proved unusable; `state` continues with one connection from its prefix.
        case fellBack
        /// The server sent all of a shorter range than asked for, as its Content-Range said:
        /// not a failure; the rest is asked for at once, in the same attempt.
        case shortRange
    }

    /// Runs one attempt. Whatever its end, the part file is closed before it returns, for every
    /// copy of it (`PartFile.close()`), unless the verified file was handed on to placement:
    /// every request and flush of the attempt has ended by then, and the next transfer of the
    /// download, which the manager may start as soon as it hears of this end, finds it free.
    func run(_ state: inout TransferState, live: LiveTransfer, reporter: TransferReporter) async -> TransferResult {
        live.adoptSpeedLimit(state.request.maxBytesPerSecond)
        live.runnerBegan()
        // A limit changed while this ran stays with the state for the next attempt; where the
        // bytes came from is over with it (and the probe would keep the attempt's job alive).
        defer {
            state.request.maxBytesPerSecond = live.speedLimit
            live.setServers(nil)
        }
        do {
            let result = try await attempt(&state, live: live, reporter: reporter)
            state.part.close()
            return result
        } catch {
            await checkpointIfPossible(state, reporter: reporter)
            if !Task.isCancelled || live.timedOut, !state.keepsResumableBytes {
                // Nothing in the part file can be continued (no bytes, or no strong validator):
                // the next attempt starts from 0 anyway, and a download that fails for good
                // leaves no part file behind. One that holds resumable bytes keeps it.
                state.part.discard()
            }
            state.part.close()
            if live.timedOut || !Task.isCancelled { state.turnToNextSource(after: error, timedOut: live.timedOut) }
            if live.timedOut {
                // Stopped by the manager's watchdog, not by a caller: a transient failure.
                return .failed(HaulError(.timeout, "\(state.finalURL ?? state.request.url): no data received for longer than the read timeout"))
            }
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
        // A file that changes under a segmented transfer is fetched again once more split;
        // if it changes again, with one connection, whose rules need no second chance.
        var mayRestartSplit = true
        while true {
            switch try await fetch(&state, maySplit: mayRestartSplit, live: live, reporter: reporter) {
            case .complete:
                // The server's part is done: a flush before placement takes what it takes.
                return try await live.holdingReads { () async throws(HaulError) in
                    try await verify(&state)
                }
            case .restarted:
                mayRestartSplit = false
            case .fellBack, .shortRange:
                continue
            }
        }
    }

    /// Sends the first request (continuing what is on disk when the rules allow), then
    /// streams the body with one connection, or splits the rest over several.
    private func fetch(_ state: inout TransferState, maySplit: Bool, live: LiveTransfer, reporter: TransferReporter) async throws(HaulError) -> FetchEnd {
        state.part.followsDirectoryLinks = !refusesLinksInDirectories
        if state.bytesOnDisk > 0 || state.segments != nil,
           try !state.part.reopenToContinue(atLeast: state.segments == nil ? state.bytesOnDisk : Int64(0)) {
            // The part file is gone, or someone else wrote to it since this transfer closed it
            // (another process's download of the same file): nothing counted is in it any more.
            state.startOver()
            await reporter.checkpoint(TransferCheckpoint(durableOffset: 0, validator: nil, expectedLength: nil, finalURL: state.finalURL))
        }
        if state.entity?.isResumable != true { state.segments = nil }
        if let plan = state.segments, plan.isComplete {
            // Every segment is here: continue as one connection would (below).
            state.segments = nil
            state.bytesOnDisk = plan.totalLength
            state.hasher = nil
        }
        // The length the part keeps while its bytes from `bytesOnDisk` on are fetched again.
        var keptLength: Int64?
        if state.segments == nil, state.entity?.isResumable == true, let total = state.entity?.totalLength, total > 0,
           state.bytesOnDisk == total {
            // Every byte is here but the file was not placed (stopped just before the rename,
            // or placement failed). A range past the end would get 416 and a whole new
            // download; asking for the last byte again revalidates the file instead. The part
            // keeps that byte until the new one overwrites it: the store may record the whole
            // length as durable, and a part shorter than that is thrown away on recovery.
            state.bytesOnDisk = total - 1
            state.hasher = nil
            keptLength = total
        }
        // A segmented download continues with its first unfinished segment; the others follow.
        var resumedSegment = state.segments?.firstUnfinished
        var offset = resumedSegment?.written ?? (state.entity?.isResumable == true ? state.bytesOnDisk : 0)
        var response: HTTPTransport.Response
        var decision: ResumePolicy.Decision
        while true {
            var headers: [HeaderField] = []
            if let segment = resumedSegment, let validator = state.entity?.validator {
                headers += ResumePolicy.rangeHeaders(from: offset, to: segment.end, validator: validator)
            } else {
                headers += ResumePolicy.rangeHeaders(offset: offset, validator: state.entity?.validator)
            }
            response = try await firstResponse(&state, offset: offset, adding: headers, live: live)
            decision = ResumePolicy.decide(
                requestedOffset: offset, previous: state.entity, status: response.status,
                header: response.header, url: response.finalURL.absoluteString,
                strict: state.mustProveSameFile(state.sourceIndex))
            guard case .requestAgainWithoutRange(let reason) = decision, offset > 0 else { break }
            reporter.restartedFromZero("\(reason); asking for the whole file again")
            _ = try? await response.body.collect(upTo: 64 * 1024)
            offset = 0
            resumedSegment = nil
            keptLength = nil
        }

        switch decision {
        case .fail(let error):
            // An error body is never saved; the bytes already on disk stay for a later resume.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            throw error
        case .requestAgainWithoutRange(let reason):
            throw HaulError(.invalidResponse, "\(response.finalURL): \(reason)")
        case .append(let resumeOffset):
            if let segment = resumedSegment {
                try state.part.openKeepingContents()
                return try await fetchSegments(
                    &state, response: response, segmentStart: segment.start, from: resumeOffset, requestedEnd: segment.end,
                    live: live, reporter: reporter)
            }
            precondition(resumeOffset == state.bytesOnDisk, "resume offset and part length disagree")
            // Anything past the recorded offset is not trusted: cut it before appending (a
            // whole part being revalidated keeps its last byte until it is written over).
            try state.part.open(truncatingTo: keptLength ?? state.bytesOnDisk, writingAt: state.bytesOnDisk)
            if maySplit, !state.splitRefused, let plan = splitPlan(state, response: response, written: resumeOffset) {
                // Begun with one connection (or asked for more since): the rest is split.
                state.segments = plan
                state.hashedLength = state.hasher == nil ? 0 : state.bytesOnDisk
                return try await fetchSegments(
                    &state, response: response, segmentStart: 0, from: resumeOffset, requestedEnd: plan.totalLength,
                    live: live, reporter: reporter)
            }
            if state.hasher == nil {
                let current = state
                state.hasher = try await live.holdingReads { () async throws(HaulError) in try await rebuildHasher(current) }
            }
        case .writeFromStart:
            try state.part.open(truncatingTo: 0)
            let hadBytes = state.bytesOnDisk > 0 || state.segments != nil
            if hadBytes, offset > 0 {
                reporter.restartedFromZero("the server answered \(response.status) to a range request: the file changed or ranges are not served")
            }
            state.startOver()
            state.entity = ResumePolicy.entity(status: response.status, header: response.header)
            state.validatorSource = state.sourceIndex
            offset = 0
            if hadBytes {
                // The recorded prefix is gone; say so before new bytes could be mistaken for it.
                await reporter.checkpoint(TransferCheckpoint(
                    durableOffset: 0, validator: state.entity?.validator,
                    expectedLength: state.entity?.totalLength, finalURL: response.finalURL))
            }
            if maySplit, !state.splitRefused, let plan = splitPlan(state, response: response) {
                state.segments = plan
                return try await fetchSegments(
                    &state, response: response, segmentStart: 0, from: 0, requestedEnd: plan.totalLength,
                    live: live, reporter: reporter)
            }
        }
        state.finalURL = response.finalURL
        state.contentDisposition = response.header("content-disposition")
        let expected = state.entity?.totalLength
        live.reset(completedBytes: state.bytesOnDisk, expectedBytes: expected)
        reporter.started(offset, response.finalURL)

        try await stream(response.body, into: &state, expected: expected, live: live, reporter: reporter)

        if let expected, state.bytesOnDisk != expected {
            if response.status == 206, state.bytesOnDisk > offset,
               let range = response.header("content-range").flatMap(ContentRange.init(parsing:)), state.bytesOnDisk == range.end + 1 {
                return .shortRange
            }
            throw HaulError(.lengthMismatch, "\(response.finalURL) announced \(expected) bytes but sent \(state.bytesOnDisk)")
        }
        return .complete
    }

    /// The split of the bytes after `written`, if it is worth one and the response proves it
    /// safe: ranges offered (or a 206 that served one), a strong validator, identity coding,
    /// and a known length.
    private func splitPlan(_ state: TransferState, response: HTTPTransport.Response, written: Int64 = 0) -> SegmentPlan? {
        let connections = segmentation.connections(for: state.request)
        guard connections > 1 else { return nil }
        let rangesServed = response.status == 206
            || (response.status == 200 && response.header("accept-ranges").map { HeaderValue.contains($0, lowercaseASCII: "bytes") } == true)
        guard rangesServed,
              let entity = state.entity, entity.isResumable, entity.validator != nil, let total = entity.totalLength
        else { return nil }
        return SegmentPlan.split(
            totalLength: total, written: written, connections: connections, minSegmentSize: segmentation.minSegmentSize,
            minStealSize: segmentation.minStealSize)
    }

    /// Runs the segments, then steers by how that ended. `response` is the first connection's: its body continues the segment starting at
    /// `segmentStart` from `from`, and would run to `requestedEnd` if read to the end.
    private func fetchSegments(
        _ state: inout TransferState, response: HTTPTransport.Response, segmentStart: Int64, from: Int64, requestedEnd: Int64,
        live: LiveTransfer, reporter: TransferReporter
    ) async throws(HaulError) -> FetchEnd {
        guard let plan = state.segments else { preconditionFailure("no plan to run") }
        let finalURL = response.finalURL
        state.finalURL = finalURL
        state.contentDisposition = response.header("content-disposition")
        let first = SegmentedTransfer.FirstResponse(
            body: response.body, segmentStart: segmentStart, from: from, requestedEnd: requestedEnd)
        live.reset(completedBytes: plan.writtenBytes, expectedBytes: plan.totalLength)
        reporter.started(plan.writtenBytes, finalURL)
        let transfer = SegmentedTransfer(
            transport: transport, checkpointBytes: checkpointBytes, checkpointInterval: checkpointInterval,
            writeFault: writeFault, globalLimit: globalLimit,
            connections: segmentation.connections(for: state.request),
            maxConnectionsPerServer: segmentation.maxConnectionsPerServer, minSegmentSize: segmentation.minSegmentSize,
            minStealSize: segmentation.minStealSize, stalledConnectionTimeout: segmentation.stalledConnectionTimeout)
        switch try await transfer.run(&state, first: first, live: live, reporter: reporter) {
        case .complete:
            state.bytesOnDisk = plan.totalLength
            state.segments = nil
            return .complete
        case .fileChanged:
            // Nothing fetched is usable; never mix two versions of a file.
            let validator = state.entity?.validator
            state.startOver()
            state.part.close()
            await reporter.checkpoint(TransferCheckpoint(durableOffset: 0, validator: validator, expectedLength: nil, finalURL: finalURL))
            return .restarted
        case .rangesUnusable:
            // The bytes are good, but only the gapless prefix can be continued by one connection.
            let current = state.segments ?? plan
            state.segments = nil
            state.splitRefused = true
            state.bytesOnDisk = current.contiguousWrittenPrefix
            if state.hashedLength != state.bytesOnDisk { state.hasher = nil }
            // Flushed first, so that the whole written prefix can be recorded: the durable one
            // may be shorter than what the store holds (a split of a resumed download counts
            // its first bytes durable only from its first checkpoint).
            let part = state.part
            try await live.holdingReads { () async throws(HaulError) in try await Self.sync(part) }
            await reporter.checkpoint(TransferCheckpoint(
                durableOffset: state.bytesOnDisk, validator: state.entity?.validator,
                expectedLength: state.entity?.totalLength, finalURL: finalURL))
            return .fellBack
        }
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
                    throw HaulError(.invalidResponse, "\(state.finalURL?.absoluteString ?? "the server") sent more than the \(expected) bytes it announced")
                }
                if let writeFault, let error = writeFault.error(state.bytesOnDisk) { throw error }
                try state.part.write(buffer)
                state.hasher?.update(buffer)
                state.bytesOnDisk += Int64(count)
                try await SpeedThrottle.account(count, live: live, global: globalLimit)
                if state.entity?.isResumable == true,
                   state.bytesOnDisk - lastCheckpointBytes >= checkpointBytes
                    || lastCheckpointTime.duration(to: clock.now) >= checkpointInterval {
                    // A flush on a slow disk is not the server falling silent. The checkpoint is
                    // of the state as it is now: the closure reads a copy.
                    let current = state
                    try await live.holdingReads { () async throws(HaulError) in try await checkpoint(current, reporter: reporter) }
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
}
