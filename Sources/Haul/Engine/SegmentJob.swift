import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// What the connections of one segmented transfer share: the fixed facts of the download and,
/// behind one lock, the plan, the hasher and the checkpoint bookkeeping.
final class SegmentJob: Sendable {
    struct Shared: Sendable {
        var plan: SegmentPlan
        /// Nil while the connection at the end of the hashed prefix carries it.
        var hasher: StreamingHasher?
        var hashedLength: Int64
        /// The URIs requests go to (the reference, `url`, is source 0).
        var mirrors: MirrorSet
        var bytesSinceCheckpoint: Int64 = 0
        var lastCheckpoint = ContinuousClock.now
        var checkpointing = false
        var silence = ConnectionSilence()
        /// Each connection's request under way, so that a takeover can drop it.
        var runs: [Int: Task<Run, Never>] = [:]
        /// Connections whose segment was taken over during their current request.
        var takenOver: Set<Int> = []
    }

    /// What one request of a connection (and the streaming of its body) left behind.
    struct Run: Sendable {
        var carried: StreamingHasher?
        var written: Int64 = 0
        /// Streaming failed.
        var error: HaulError?
        /// The answer to the request ends the connection (an error status, a changed file…).
        var end: ConnectionEnd?
        /// Its URI failed or was dropped, and another URI may be asked instead (`MirrorSet`).
        var failover = false
        /// The request that was made (nil when none was).
        var ticket: MirrorSet.Ticket?
        /// No source may be asked before this (each waits after a failure): the connection
        /// gives its segment back and asks again then.
        var waitUntil: ContinuousClock.Instant?
    }

    let transfer: SegmentedTransfer
    let part: PartFile
    /// The reference's URL after redirects (source 0 of the mirror set), for messages.
    let url: URL
    let entity: ResumePolicy.Entity
    let validator: Validator
    let live: LiveTransfer
    let reporter: TransferReporter
    /// Behind its lock; touched only by SegmentJob's own files.
    let shared: NIOLockedValueBox<Shared>

    init(
        transfer: SegmentedTransfer, part: PartFile, url: URL, entity: ResumePolicy.Entity,
        validator: Validator, live: LiveTransfer, reporter: TransferReporter, shared: Shared
    ) {
        self.transfer = transfer
        self.part = part
        self.url = url
        self.entity = entity
        self.validator = validator
        self.live = live
        self.reporter = reporter
        var shared = shared
        shared.plan.minStealSize = transfer.minStealSize
        self.shared = NIOLockedValueBox(shared)
    }

    /// Work for a connection that owns none: the segment starting at `preferredStart` if it
    /// is free, else the one at the end of the hashed prefix, so that hashing in flight can
    /// go on, else the lowest free one, else half of another's.
    func assign(to connection: Int, preferring preferredStart: Int64? = nil) -> SegmentPlan.Assignment? {
        shared.withLockedValue { shared in
            let assignment = shared.plan.assign(to: connection, preferring: preferredStart ?? shared.hashedLength)
            if assignment != nil { started(connection, in: &shared) }
            return assignment
        }
    }

    /// A connection starts on new work: its silence counts from now, and a takeover of its
    /// previous segment (noticed too late to drop its request) is forgotten.
    private func started(_ connection: Int, in shared: inout Shared) {
        shared.silence.heard(connection, at: .now)
        shared.takenOver.remove(connection)
    }

    /// Work for a connection that owns none: `assign`'s, else (when stall takeovers are on)
    /// the rest of a stalled connection's segment, waiting for one to stall as long as another
    /// connection still owns bytes to fetch. Nil when no work is left that it could take.
    private func nextAssignment(for connection: Int) async -> SegmentPlan.Assignment? {
        let limit = transfer.stalledConnectionTimeout
        // Checked often enough that a takeover comes soon after the limit, rarely enough to cost nothing.
        let poll = limit.map { min(max($0 / 4, .milliseconds(10)), .milliseconds(250)) }
        while !Task.isCancelled {
            enum Step { case work(SegmentPlan.Assignment, dropping: Task<Run, Never>?), wait, done }
            let step = shared.withLockedValue { shared -> Step in
                if let assignment = shared.plan.assign(to: connection, preferring: shared.hashedLength) {
                    started(connection, in: &shared)
                    return .work(assignment, dropping: nil)
                }
                let owners = shared.plan.ownersWithUnreservedBytes.map(\.connection)
                guard let limit, !owners.isEmpty else { return .done }
                guard let victim = shared.silence.longestSilent(among: owners, longerThan: limit, now: .now),
                      let assignment = shared.plan.takeOver(from: victim, by: connection)
                else { return .wait }
                started(connection, in: &shared)
                shared.takenOver.insert(victim)
                return .work(assignment, dropping: shared.runs[victim])
            }
            switch step {
            case .work(let assignment, let stalled):
                stalled?.cancel()
                return assignment
            case .done:
                return nil
            case .wait:
                try? await Task.sleep(for: poll ?? .milliseconds(250))
            }
        }
        return nil
    }

    /// The URIs the connections fetch from right now (`DownloadManager.servers(of:)`).
    func servers() -> [DownloadServer] {
        shared.withLockedValue { $0.mirrors.servers(at: .now) }
    }

    /// Everything the connections left, once all of them have ended.
    func finish() -> Shared {
        shared.withLockedValue { $0 }
    }

    /// One connection: fetches its segment, then takes more work until there is none.
    func connection(_ number: Int, first: (response: SegmentedTransfer.FirstResponse, assignment: SegmentPlan.Assignment)?) async -> ConnectionEnd {
        var pending = first
        var fruitless = 0
        while !Task.isCancelled {
            let assignment: SegmentPlan.Assignment
            let given = pending.map { (body: $0.response.body, requestedEnd: $0.response.requestedEnd) }
            if let taken = pending {
                assignment = taken.assignment
                pending = nil
            } else {
                guard let next = await nextAssignment(for: number) else { return .done }
                assignment = next
            }
            let run = await droppable(number) { await self.fetch(assignment, connection: number, given: given) }
            let takenOver = shared.withLockedValue { shared in
                shared.runs[number] = nil
                return shared.takenOver.remove(number) != nil
            }
            let finished = segmentFinished(assignment.segmentStart)
            release(assignment, by: number, returning: run.carried)
            if let error = run.error, Self.isFileSystem(error) { return .fatal(error) }
            if takenOver {
                // Its request was dropped for silence; another connection fetches the rest. A
                // source that falls silent failed that request (with mirrors, others are asked).
                if case .changeCourse? = run.end { return run.end! }
                if let ticket = run.ticket {
                    let error = HaulError(.timeout, "\(url): no data from a source for longer than the stall limit")
                    shared.withLockedValue { shared in
                        if !shared.mirrors.isSingle { _ = shared.mirrors.failed(ticket.source, error, serial: ticket.serial) }
                    }
                }
                fruitless = 0
                continue
            }
            if let until = run.waitUntil {
                // Every source waits after a failure: ask again then, not at once.
                try? await ContinuousClock().sleep(until: until)
                fruitless = 0
                continue
            }
            if let end = run.end {
                if run.failover { continue }
                return end
            }
            if let error = run.error {
                if Task.isCancelled || error.code == .canceled { return .failed(error) }
                // A broken link after some bytes: ask again for the rest. Without a byte: stop,
                // unless another URI of the download may be asked.
                guard run.written > 0 else {
                    if run.failover { continue }
                    return .failed(error)
                }
                fruitless = 0
                continue
            }
            // A body that ended short of the segment (a server sending less than asked) is
            // asked again; one that keeps bringing nothing is given up.
            if finished || run.written > 0 {
                fruitless = 0
            } else {
                fruitless += 1
                if fruitless >= 3 {
                    return .failed(HaulError(.invalidResponse, "\(url) answered range requests without sending the bytes"))
                }
            }
        }
        return .failed(HaulError(.canceled, "the transfer of \(url) was stopped"))
    }

    /// Runs one request of `connection` in a task of its own that a takeover can cancel (and
    /// that the connection's own cancellation cancels too).
    private func droppable(_ connection: Int, _ work: @escaping @Sendable () async -> Run) async -> Run {
        let task = Task(operation: work)
        let alreadyTakenOver = shared.withLockedValue { shared in
            shared.runs[connection] = task
            return shared.takenOver.contains(connection)
        }
        if alreadyTakenOver { task.cancel() }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }

    /// Requests the assignment (unless the response is `given`) and streams its body.
    private func fetch(
        _ assignment: SegmentPlan.Assignment, connection: Int, given: (body: HTTPClientResponse.Body, requestedEnd: Int64)?
    ) async -> Run {
        var run = Run()
        let body: HTTPClientResponse.Body
        let requestedEnd: Int64
        // The first response came from the reference; every other request goes to a source
        // the mirror set chooses.
        let ticket: MirrorSet.Ticket
        if let given {
            ticket = shared.withLockedValue { $0.mirrors.use(0) }
            (body, requestedEnd) = given
        } else {
            switch shared.withLockedValue({ $0.mirrors.pick() }) {
            case .source(let picked):
                ticket = picked
            case .wait(let until):
                run.waitUntil = until
                return run
            case .busy:
                // Every usable source has its `-x` requests under way: one connection too many.
                run.end = .done
                return run
            case .none:
                run.end = .failed(HaulError(.connectionFailed, "\(url): every URI of the download failed"))
                return run
            }
            run.ticket = ticket
            switch await request(assignment, ticket: ticket) {
            case .body(let response): (body, requestedEnd) = (response, assignment.to)
            case .end(let end, let failover):
                shared.withLockedValue { $0.mirrors.release(ticket.source) }
                run.end = end
                run.failover = failover
                return run
            }
        }
        run.ticket = ticket
        defer { shared.withLockedValue { $0.mirrors.release(ticket.source) } }
        do {
            try await stream(body, into: assignment, requestedEnd: requestedEnd, connection: connection, ticket: ticket,
                             hasher: &run.carried, written: &run.written)
        } catch {
            run.error = error
            if run.written == 0, !Task.isCancelled, error.code != .canceled {
                run.failover = shared.withLockedValue { $0.mirrors.failed(ticket.source, error, serial: ticket.serial) }
            }
        }
        return run
    }

    /// Writes the body into the segment until the segment's end (which a steal may lower
    /// meanwhile) or the body's end. Stops reading as soon as nothing more belongs to the
    /// segment; the connection is then closed rather than drained.
    private func stream(
        _ body: HTTPClientResponse.Body, into assignment: SegmentPlan.Assignment, requestedEnd: Int64, connection: Int,
        ticket: MirrorSet.Ticket, hasher: inout StreamingHasher?, written: inout Int64
    ) async throws(HaulError) {
        let start = assignment.segmentStart
        do {
            for try await received in body {
                var buffer = received
                while buffer.readableBytes > 0 {
                    let offered = buffer.readableBytes
                    let (reservation, segmentEnd) = reserve(offered, in: start, by: connection, hasher: &hasher)
                    guard reservation.count > 0 else { return }
                    if let fault = transfer.writeFault, let error = fault.error(reservation.position) { throw error }
                    try part.write(buffer, count: reservation.count, at: reservation.position)
                    if hasher != nil {
                        buffer.withUnsafeReadableBytes { hasher!.update(UnsafeRawBufferPointer(rebasing: $0[0..<reservation.count])) }
                    }
                    let checkpoint = commit(reservation.count, in: start, by: connection, from: ticket, hashed: hasher != nil)
                    written += Int64(reservation.count)
                    buffer.moveReaderIndex(forwardBy: reservation.count)
                    // Waiting for a limit or a flush is not the server falling silent.
                    try await holding(connection) { () async throws(HaulError) in
                        try await SpeedThrottle.account(reservation.count, live: live, global: transfer.globalLimit)
                        if let checkpoint {
                            try await live.holdingReads { () async throws(HaulError) in try await self.checkpoint(checkpoint) }
                        }
                    }
                    // The segment is whole; if the response goes further (its end was stolen),
                    // stop reading now instead of receiving bytes that belong to another.
                    if reservation.position + Int64(reservation.count) >= segmentEnd, segmentEnd < requestedEnd { return }
                }
            }
        } catch let error as HaulError {
            throw error
        } catch {
            throw HTTPTransport.map(error, url: url)
        }
    }

    private func reserve(
        _ count: Int, in start: Int64, by connection: Int, hasher: inout StreamingHasher?
    ) -> (SegmentPlan.Reservation, Int64) {
        let (reservation, end, taken) = shared.withLockedValue { shared -> (SegmentPlan.Reservation, Int64, StreamingHasher?) in
            let reservation = shared.plan.reserve(count, inSegmentStartingAt: start, by: connection)
            let end = shared.plan.segment(startingAt: start)?.end ?? start
            // The bytes continue the hashed prefix: carry the hasher while they do.
            var taken: StreamingHasher?
            if reservation.count > 0, reservation.position == shared.hashedLength, shared.hasher != nil {
                taken = shared.hasher
                shared.hasher = nil
            }
            return (reservation, end, taken)
        }
        if let taken { hasher = taken }
        return (reservation, end)
    }

    /// Records written bytes; returns the offsets to make durable when a checkpoint is due
    /// and no other connection is taking one.
    private func commit(_ count: Int, in start: Int64, by connection: Int, from ticket: MirrorSet.Ticket, hashed: Bool) -> [DurableSegment]? {
        let bytesDue = transfer.checkpointBytes
        let timeDue = transfer.checkpointInterval
        let now = ContinuousClock.now
        return shared.withLockedValue { shared in
            shared.plan.commit(count, inSegmentStartingAt: start, by: connection)
            shared.silence.heard(connection, at: now)
            shared.mirrors.received(count, from: ticket.source, serial: ticket.serial, at: now)
            if hashed { shared.hashedLength += Int64(count) }
            shared.bytesSinceCheckpoint += Int64(count)
            guard !shared.checkpointing else { return nil }
            guard shared.bytesSinceCheckpoint >= bytesDue || shared.lastCheckpoint.duration(to: now) >= timeDue else { return nil }
            shared.checkpointing = true
            shared.bytesSinceCheckpoint = 0
            shared.lastCheckpoint = now
            return shared.plan.writtenOffsets
        }
    }

    /// Data before metadata: flush the file, then report every segment's offset it guarantees.
    private func checkpoint(_ offsets: [DurableSegment]) async throws(HaulError) {
        do {
            try await TransferRunner.sync(part)
        } catch {
            shared.withLockedValue { $0.checkpointing = false }
            throw error
        }
        let (segments, prefix) = shared.withLockedValue { shared in
            shared.plan.markDurable(offsets)
            return (shared.plan.durableSegments, shared.plan.contiguousDurablePrefix)
        }
        await reporter.checkpoint(TransferCheckpoint(
            durableOffset: prefix, validator: validator, expectedLength: entity.totalLength, finalURL: url,
            segments: segments))
        shared.withLockedValue { $0.checkpointing = false }
    }

    /// Runs `body` while `connection` holds its reads back on purpose: not silence.
    private func holding<T>(_ connection: Int, _ body: () async throws(HaulError) -> T) async throws(HaulError) -> T {
        shared.withLockedValue { $0.silence.hold(connection) }
        defer { shared.withLockedValue { $0.silence.endHold(connection, at: .now) } }
        return try await body()
    }

    private func release(_ assignment: SegmentPlan.Assignment, by connection: Int, returning hasher: StreamingHasher? = nil) {
        shared.withLockedValue { shared in
            shared.plan.release(segmentStartingAt: assignment.segmentStart, by: connection)
            if let hasher { shared.hasher = hasher }
        }
    }

    private func segmentFinished(_ start: Int64) -> Bool {
        shared.withLockedValue { $0.plan.segment(startingAt: start)?.isFinished ?? true }
    }

    /// Errors of the part file, not of the connection: no other connection can do better.
    static func isFileSystem(_ error: HaulError) -> Bool {
        [.diskFull, .fileSystem, .permissionDenied, .directoryNotFound].contains(error.code)
    }
}
