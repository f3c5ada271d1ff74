import NIOConcurrencyHelpers

/// Runs the manager's transfers in a few long-lived worker tasks, and hands their ends back
/// in batches.
///
/// Why: a batch of thousands of small files spent as much on the bookkeeping around each
/// transfer as on the transfer. A task created per download, and an actor round trip per
/// download to report its end, are gone here: a worker takes the next transfer the manager
/// submitted as soon as its last one ended (one task per slot in use, not per file), and the
/// ends of every transfer that finished meanwhile reach the manager in one turn (`takeEnded`),
/// woken once per batch. The transfer itself is `TransferRunner.run`, whatever its size: a
/// small body is written as it arrives and verified at its end; a large one checkpoints,
/// splits and resumes as it always did.
///
/// Stopping one transfer (pause, cancel, the read-timeout watchdog) cancels the task of the
/// worker running it; that worker reports the transfer's end and then leaves, and the next
/// transfer submitted starts a new worker. A transfer stopped before a worker took it ends
/// at once, stopped (failed, when the watchdog stopped it); one submitted after `close` ends
/// at once, failed. Every submitted
/// transfer ends exactly once.
final class TransferLane: Sendable {
    /// One transfer to run: what `TransferRunner.run` needs.
    struct Job: Sendable {
        let id: DownloadID
        let transfer: TransferState
        let live: LiveTransfer
        let reporter: TransferReporter
    }

    /// A transfer that ended, with its state for the next attempt.
    struct Ended: Sendable {
        let id: DownloadID
        let transfer: TransferState
        let result: TransferResult
    }

    private struct Idle: Sendable {
        let worker: Int
        let continuation: CheckedContinuation<Job?, Never>
    }

    private struct State: Sendable {
        var queue: [Job] = []
        /// Index of the first job of `queue` not taken yet (taken ones are dropped in bulk).
        var head = 0
        var idle: [Idle] = []
        var workers: [Int: Task<Void, Never>] = [:]
        var nextWorker = 0
        /// Which worker runs each transfer that has started and not ended.
        var running: [DownloadID: Int] = [:]
        /// Workers whose task was cancelled to stop their transfer: they take no other.
        var leaving: Set<Int> = []
        var ended: [Ended] = []
        var wakeScheduled = false
        var closed = false
        var wake: (@Sendable () -> Void)?

        var hasQueued: Bool { head < queue.count }

        mutating func takeQueued() -> Job {
            let job = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            return job
        }
    }

    private let state = NIOLockedValueBox(State())
    private let runner: TransferRunner

    init(runner: TransferRunner) {
        self.runner = runner
    }

    /// What to call (from any thread) when ends are waiting and no call is pending: the
    /// manager then takes them with `takeEnded`.
    func onEnded(_ wake: @escaping @Sendable () -> Void) {
        state.withLockedValue { $0.wake = wake }
    }

    /// Starts `job` on an idle worker, or on a new one.
    func submit(_ job: Job) {
        enum Placed {
            case handed(Idle)
            case queued
            case refused
        }
        let placed: Placed = state.withLockedValue { state in
            if state.closed { return .refused }
            if let idle = state.idle.popLast() {
                state.running[job.id] = idle.worker
                return .handed(idle)
            }
            state.queue.append(job)
            startWorker(&state)
            return .queued
        }
        switch placed {
        case .handed(let idle): idle.continuation.resume(returning: job)
        case .queued: break
        case .refused:
            // Nobody asked this transfer to stop: it failed to start.
            let error = HaulError(.shutdown, "the download manager has been shut down")
            finish(nil, Ended(id: job.id, transfer: job.transfer, result: .failed(error)))
        }
    }

    /// Stops the transfer of `id`: cancels its worker, or ends it now if no worker took it yet.
    /// Does nothing if it ended already (its end is on its way to the manager). Returns whether
    /// an end of a transfer of `id` is still to be taken (`takeEnded`): false when the lane
    /// has none.
    @discardableResult
    func stop(_ id: DownloadID) -> Bool {
        enum Found {
            case running(Task<Void, Never>?)
            case queued(Job)
            case ended
            case none
        }
        let found: Found = state.withLockedValue { state in
            if let worker = state.running[id] {
                state.leaving.insert(worker)
                return .running(state.workers[worker])
            }
            if let index = state.queue[state.head...].firstIndex(where: { $0.id == id }) {
                return .queued(state.queue.remove(at: index))
            }
            return state.ended.contains { $0.id == id } ? .ended : .none
        }
        switch found {
        case .running(let task): task?.cancel()
        case .queued(let job): finish(nil, Ended(id: id, transfer: job.transfer, result: Self.stoppedBeforeStart(job)))
        case .ended: break
        case .none: return false
        }
        return true
    }

    /// How a transfer stopped before a worker took it ends: as the runner would have ended it.
    /// The read-timeout watchdog stops transfers nobody else asked to stop; a transfer that
    /// waited here longer than the read timeout (a machine too busy to start a worker) is a
    /// transient failure, retried, not a stop.
    private static func stoppedBeforeStart(_ job: Job) -> TransferResult {
        guard job.live.timedOut else { return .stopped }
        return .failed(HaulError(.timeout, "\(job.transfer.request.url): no data received for longer than the read timeout"))
    }

    /// Every end reported since the last call, in the order they ended.
    func takeEnded() -> [Ended] {
        state.withLockedValue { state in
            state.wakeScheduled = false
            defer { state.ended = [] }
            return state.ended
        }
    }

    /// No more transfers: idle workers leave, and later submissions end at once, failed.
    /// Running transfers are the manager's to stop first.
    func close() {
        let idle = state.withLockedValue { state in
            state.closed = true
            for worker in state.idle { state.workers[worker.worker] = nil }
            defer { state.idle = [] }
            return state.idle
        }
        for worker in idle { worker.continuation.resume(returning: nil) }
    }

    // MARK: Workers

    private func startWorker(_ state: inout State) {
        let number = state.nextWorker
        state.nextWorker += 1
        // Detached: it must not inherit the caller's actor or priority, and it starts on a free
        // thread at once. It waits on the lock held here before it looks for work.
        state.workers[number] = Task.detached { [self] in await work(number) }
    }

    private func work(_ number: Int) async {
        while let job = await next(number) {
            var transfer = job.transfer
            let result = await runner.run(&transfer, live: job.live, reporter: job.reporter)
            finish(number, Ended(id: job.id, transfer: transfer, result: result))
        }
    }

    /// The next transfer for worker `number`, waiting for one; nil when it must leave.
    private func next(_ number: Int) async -> Job? {
        enum Step {
            case run(Job)
            case leave
            case wait
        }
        let step: Step = state.withLockedValue { state in
            if state.leaving.contains(number) || state.closed {
                state.leaving.remove(number)
                state.workers[number] = nil
                return .leave
            }
            guard state.hasQueued else { return .wait }
            let job = state.takeQueued()
            state.running[job.id] = number
            return .run(job)
        }
        switch step {
        case .run(let job): return job
        case .leave: return nil
        case .wait: break
        }
        return await withCheckedContinuation { continuation in
            let resumeNow: Job?? = state.withLockedValue { state in
                if state.closed {
                    state.workers[number] = nil
                    return .some(nil)
                }
                if state.hasQueued {
                    let job = state.takeQueued()
                    state.running[job.id] = number
                    return .some(job)
                }
                state.idle.append(Idle(worker: number, continuation: continuation))
                return .none
            }
            if let resumeNow { continuation.resume(returning: resumeNow) }
        }
    }

    /// Records an end and wakes the manager unless a wake is pending.
    private func finish(_ worker: Int?, _ ended: Ended) {
        let wake: (@Sendable () -> Void)? = state.withLockedValue { state in
            if worker != nil { state.running[ended.id] = nil }
            state.ended.append(ended)
            guard !state.wakeScheduled else { return nil }
            state.wakeScheduled = true
            return state.wake
        }
        wake?()
    }
}
