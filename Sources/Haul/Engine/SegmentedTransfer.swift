import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Runs one download over several connections at once, each filling its own segment of the
/// same part file by positional writes, until every segment is complete.
///
/// The first connection is the response that started the transfer (a plain GET, or the first
/// range of a resumed plan); the others send `Range: bytes=a-b` with `If-Range`, and each of
/// their answers must be a `206` of the very same file (`ResumePolicy.judgeSegment`) or the
/// whole transfer stops: a changed file restarts from zero, a server that cannot serve ranges
/// falls back to one connection. A connection that loses its link after receiving bytes asks
/// again for the rest; one that gets no byte (refused, an error status) stops, and the others
/// take over its segment when theirs are done, so a server that caps connections still works.
/// A connection whose server stalls (silent longer than `stalledConnectionTimeout`) is taken
/// over by one with nothing left to do, which asks for the rest; the stalled request is dropped.
///
/// Checkpoints: after every `checkpointBytes` or `checkpointInterval`, one connection takes
/// the written offsets of all segments, flushes the file, and only then reports them durable.
///
/// Checksums: the connection writing at the end of the hashed prefix carries the hasher and
/// hashes in flight; when it leaves that run of bytes, the rest is read back once at the end.
struct SegmentedTransfer: Sendable {
    /// How a segmented transfer ended, other than by an error.
    enum End: Sendable, Hashable {
        /// Every segment is written and the hasher has seen every byte.
        case complete
        /// The file on the server changed: nothing fetched so far is usable.
        case fileChanged(reason: String)
        /// Ranges cannot be used for this file: continue with one connection.
        case rangesUnusable(reason: String)
    }

    /// The response that started the transfer, for the segment whose bytes it carries.
    struct FirstResponse: Sendable {
        var body: HTTPClientResponse.Body
        /// The segment it fills.
        var segmentStart: Int64
        /// Where its body starts (that segment's next unwritten byte).
        var from: Int64
        /// Where it would end (exclusive) if read to the end.
        var requestedEnd: Int64
    }

    let transport: HTTPTransport
    let checkpointBytes: Int64
    let checkpointInterval: Duration
    let writeFault: WriteFault?
    let globalLimit: SpeedLimiter
    let connections: Int
    /// Requests under way per URI at most (`-x`), when the download has mirrors.
    let maxConnectionsPerServer: Int
    let minSegmentSize: Int64
    let minStealSize: Int64
    /// A connection silent this long while another has nothing to do is taken over (nil: never).
    let stalledConnectionTimeout: Duration?

    /// Runs until every segment is written (`.complete`, with `state.hasher` covering the whole
    /// file), the transfer must change course (`.fileChanged`, `.rangesUnusable`), or it fails
    /// or is cancelled (thrown). Whatever happens, `state.segments` holds every written byte.
    func run(
        _ state: inout TransferState, first: FirstResponse, live: LiveTransfer, reporter: TransferReporter
    ) async throws(HaulError) -> End {
        guard let plan = state.segments, let entity = state.entity, let validator = entity.validator,
              let url = state.finalURL
        else { preconditionFailure("a segmented transfer needs a plan, a validator and a URL") }
        // The URI that answered first is the reference; mirrors must serve the same file.
        let mirrors = MirrorSet(
            request: state.request, reference: state.sourceIndex, referenceURL: url, validatorSource: state.validatorSource,
            maxPerSource: maxConnectionsPerServer)
        let job = SegmentJob(
            transfer: self, part: state.part, url: url,
            entity: entity, validator: validator, live: live, reporter: reporter,
            shared: SegmentJob.Shared(
                plan: plan, hasher: state.hasher ?? StreamingHasher(algorithms: state.requestedAlgorithms),
                hashedLength: state.hasher == nil ? 0 : state.hashedLength, mirrors: mirrors))
        live.setServers { job.servers() }
        let firstAssignment = job.assign(to: 0, preferring: first.segmentStart)
        precondition(firstAssignment?.from == first.from, "the first response must continue the first unfinished segment")
        let remaining = plan.totalLength - plan.writtenBytes
        let unfinished = plan.segments.count { !$0.isFinished }
        let count = max(1, min(connections, max(unfinished, Int(remaining / max(1, minSegmentSize)))))

        var failures: [HaulError] = []
        var stop: ConnectionEnd?
        await withTaskGroup(of: ConnectionEnd.self) { group in
            group.addTask { await job.connection(0, first: (first, firstAssignment!)) }
            for number in 1..<count {
                group.addTask { await job.connection(number, first: nil) }
            }
            for await end in group {
                switch end {
                case .done:
                    break
                case .failed(let error):
                    failures.append(error)
                case .fatal, .changeCourse:
                    if stop == nil { stop = end }
                    group.cancelAll()
                }
            }
        }

        let shared = job.finish()
        state.segments = shared.plan
        state.hasher = shared.hasher
        state.hashedLength = shared.hashedLength
        if Task.isCancelled { throw HaulError(.canceled, "the transfer of \(url) was stopped") }
        switch stop {
        case .fatal(let error)?: throw error
        case .changeCourse(let end)?: return end
        default: break
        }
        guard shared.plan.isComplete else {
            let left = shared.plan.totalLength - shared.plan.writtenBytes
            // A connection that stopped for lack of work is not a failure; the last real one is the reason.
            throw failures.last.map { HaulError($0.code, "\($0.message) (\(left) bytes left)", httpStatus: $0.httpStatus, retryAfter: $0.retryAfter) }
                ?? HaulError(.connectionFailed, "\(url): every connection ended with \(left) bytes left")
        }
        // Reading a large file back is local work, not the server falling silent.
        try await live.holdingReads { () async throws(HaulError) in try await hashRest(&state) }
        return .complete
    }

    /// Feeds the hasher the bytes after the prefix hashed in flight, read once from the file,
    /// off the cooperative threads.
    private func hashRest(_ state: inout TransferState) async throws(HaulError) {
        guard var hasher = state.hasher, !hasher.isEmpty, let total = state.segments?.totalLength,
              state.hashedLength < total
        else {
            state.hashedLength = state.segments?.totalLength ?? state.hashedLength
            return
        }
        let part = state.part
        let start = state.hashedLength
        do {
            hasher = try await NIOThreadPool.singleton.runIfActive { [hasher] in
                var hasher = hasher
                try part.hash(from: start, to: total, into: &hasher)
                return hasher
            }
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot read \(part.path) to compute its checksums: \(error)")
        }
        state.hasher = hasher
        state.hashedLength = total
    }
}
