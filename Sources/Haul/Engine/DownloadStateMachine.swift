/// The life of one download as a value type: each event returns the action the manager must
/// perform, and nothing here does I/O, so every transition is tested directly.
///
/// Internally there are more states than `DownloadState` shows: a download that has been asked
/// to stop is `stopping` until its transfer task has really ended, because a second transfer
/// must never write the same part file while the first is still running. Events that cannot
/// happen (a transfer result while no transfer runs) are programming errors and trap; requests
/// from callers that do not fit the state (resume a completed download) return
/// `.rejected` so the manager can answer with a clear error.
struct DownloadStateMachine: Sendable {
    enum StopReason: Sendable, Hashable {
        case pause
        case cancel
        /// Its request changed: start again in the same slot once the transfer has ended.
        case restart
    }

    enum State: Sendable, Hashable {
        case queued
        /// A transfer task is running; `attempt` counts HTTP attempts, from 1.
        case running(attempt: Int)
        /// A quick retry's timer is pending; no transfer runs, the slot is kept.
        case waitingToRetry(attempt: Int)
        /// Waiting for a server that is gone (the quick retries are used up): a retry timer is
        /// pending and the slot was given back (`SchedulerState.park`).
        case waitingForServer(attempt: Int)
        /// Waiting for its server, its retry is due: it asks for the next free slot, ahead of
        /// downloads that never started (see `ReturningQueue`).
        case dueForSlot(attempt: Int)
        /// A transfer was told to stop and has not ended yet.
        case stopping(StopReason)
        case paused
        case completed
        /// Indirect, so that the state of each of 100,000 queued downloads stays a few bytes
        /// instead of carrying room for an error inline.
        indirect case failed(HaulError)
        case canceled
    }

    enum Action: Sendable, Hashable {
        /// Nothing to do.
        case none
        /// Start a transfer task (the scheduler granted a slot, or a retry timer fired).
        case startTransfer(attempt: Int)
        /// Cancel the running transfer task; its end will arrive as `transferEnded`.
        case stopTransfer
        /// Start a timer that delivers `retryTimerFired` after `delay`.
        case scheduleRetry(attempt: Int, delay: Duration)
        /// Give the slot back while waiting for the server, keeping the download's precedence
        /// (`SchedulerState.park`), then carry out the action.
        indirect case giveUpSlot(then: Action)
        /// The retry is due: ask for the next free slot, ahead of the queue
        /// (`SchedulerState.markDue`); `slotGranted` follows when there is one.
        case askForSlot
        /// Cancel the retry timer, and report the download paused.
        case cancelRetryAndPause
        /// Cancel the retry timer, delete the part file, and report the download canceled.
        case cancelRetryAndDiscard
        /// Report paused (the transfer has ended; the slot is free).
        case reportPaused
        /// Report paused because of this error (disk full, say): resuming is up to the user.
        case reportPausedBecause(HaulError)
        /// Delete the part file and report canceled.
        case discardAndReportCanceled
        /// Report completed.
        case reportCompleted
        /// Report failed with this error.
        case reportFailed(HaulError)
        /// Report the download queued again.
        case reportRequeued
        /// The transfer stopped for a changed request has ended: apply the change and start a
        /// transfer again, in the slot it still holds.
        case restartTransfer(attempt: Int)
        /// The caller's request does not fit the current state.
        case rejected(HaulError)
        /// The download's bytes are verified and only its placement is left, which needs no
        /// connection: its slot goes to the next download now (it still counts as running).
        case handOverSlot
        /// Take back the slot handed over at placement (placing did not complete), then
        /// carry out the action.
        indirect case reclaimSlot(then: Action)
        /// Take the download out of the scheduler's queue, then carry out the action.
        indirect case leaveQueue(then: Action)
        /// Keep the download's place in the scheduler's queue but start it no more (paused
        /// while waiting, as in aria2's one waiting queue), then carry out the action.
        indirect case holdInQueue(then: Action)
    }

    /// How a transfer task ended.
    enum TransferOutcome: Sendable, Hashable {
        case succeeded
        /// Failed; `retryDelay` is non-nil when the retry policy allows another attempt, and
        /// `waiting` when that attempt waits for a server that is gone (the quick retries are
        /// used up): then the slot is given back until the retry is due.
        case failed(HaulError, retryDelay: Duration?, waiting: Bool = false)
        /// Ended because it was told to stop.
        case stopped
        /// Cannot go on until someone acts (a full disk): keep every byte and wait.
        case blocked(HaulError)
    }

    private(set) var state: State = .queued
    /// The running transfer's bytes are verified and its slot was handed over
    /// (`placementStarted`); reset when the transfer ends.
    private(set) var slotHandedOver = false

    init() {}

    init(state: State) { self.state = state }

    /// What callers see.
    var publicState: DownloadState {
        switch state {
        // Waiting for its server without a slot is waiting for a slot, as `DownloadState` says.
        case .queued, .waitingForServer, .dueForSlot: return .queued
        case .running, .waitingToRetry, .stopping: return .running
        case .paused: return .paused
        case .completed: return .completed
        case .failed: return .failed
        case .canceled: return .canceled
        }
    }

    /// True while the download holds a scheduler slot.
    var holdsSlot: Bool {
        switch state {
        case .running, .waitingToRetry, .stopping: return true
        default: return false
        }
    }

    /// True from its first start until it stops: holding a slot, or waiting for its server
    /// without one. What a shutdown pauses (and `invalidateAndCancel` keeps the bytes of).
    var isUnderway: Bool {
        switch state {
        case .running, .waitingToRetry, .stopping, .waitingForServer, .dueForSlot: return true
        default: return false
        }
    }

    /// A pause, cancel or restart was asked and the transfer has not ended yet: its end may
    /// be `.stopped`. Any other running download's end must not be.
    var isStopRequested: Bool {
        if case .stopping = state { return true }
        return false
    }

    /// Between attempts after a transient failure, in either phase: `DownloadInfo.isWaitingToRetry`.
    var isWaitingToRetry: Bool {
        switch state {
        case .waitingToRetry, .waitingForServer, .dueForSlot: return true
        default: return false
        }
    }

    // MARK: Scheduler and timer events

    /// The scheduler granted a slot: to a queued download, or to one whose retry is due.
    mutating func slotGranted() -> Action {
        switch state {
        case .queued:
            state = .running(attempt: 1)
            return .startTransfer(attempt: 1)
        case .dueForSlot(let attempt):
            state = .running(attempt: attempt)
            return .startTransfer(attempt: attempt)
        default:
            preconditionFailure("slot granted to a download in state \(state)")
        }
    }

    /// A retry timer fired. A quick retry starts in the slot it kept; a download waiting for
    /// its server asks for a slot first.
    mutating func retryTimerFired() -> Action {
        switch state {
        case .waitingToRetry(let attempt):
            state = .running(attempt: attempt)
            return .startTransfer(attempt: attempt)
        case .waitingForServer(let attempt):
            state = .dueForSlot(attempt: attempt)
            return .askForSlot
        default:
            preconditionFailure("retry timer fired in state \(state)")
        }
    }

    /// The transfer's bytes are all here and verified; placing the file is what is left.
    mutating func placementStarted() -> Action {
        switch state {
        case .running, .stopping:
            guard !slotHandedOver else { return .none }
            slotHandedOver = true
            return .handOverSlot
        default:
            preconditionFailure("placement started in state \(state)")
        }
    }

    /// The transfer task ended. A transfer that handed its slot over and then did not
    /// complete (placing failed, or it was stopped) takes the slot back first: it is one of
    /// the running downloads again until the action below releases it or it runs again.
    mutating func transferEnded(_ outcome: TransferOutcome) -> Action {
        let handedOver = slotHandedOver
        slotHandedOver = false
        let action = transition(after: outcome)
        return handedOver && outcome != .succeeded ? .reclaimSlot(then: action) : action
    }

    private mutating func transition(after outcome: TransferOutcome) -> Action {
        switch (state, outcome) {
        case (.running, .succeeded), (.stopping, .succeeded):
            // A transfer that finished just as it was asked to stop still produced a verified,
            // placed file: reporting anything but completed would lie.
            state = .completed
            return .reportCompleted
        case (.running(let attempt), .failed(let error, let retryDelay, let waiting)):
            if let delay = retryDelay, waiting {
                state = .waitingForServer(attempt: attempt + 1)
                return .giveUpSlot(then: .scheduleRetry(attempt: attempt + 1, delay: delay))
            }
            if let delay = retryDelay {
                state = .waitingToRetry(attempt: attempt + 1)
                return .scheduleRetry(attempt: attempt + 1, delay: delay)
            }
            state = .failed(error)
            return .reportFailed(error)
        case (.running, .blocked(let error)):
            state = .paused
            return .reportPausedBecause(error)
        case (.stopping(.pause), .failed), (.stopping(.pause), .stopped), (.stopping(.pause), .blocked):
            state = .paused
            return .reportPaused
        case (.stopping(.cancel), .failed), (.stopping(.cancel), .stopped), (.stopping(.cancel), .blocked):
            state = .canceled
            return .discardAndReportCanceled
        case (.stopping(.restart), .failed), (.stopping(.restart), .stopped), (.stopping(.restart), .blocked):
            // Whatever ended the old transfer, the new request gets a fresh count of attempts.
            state = .running(attempt: 1)
            return .restartTransfer(attempt: 1)
        case (.running, .stopped):
            preconditionFailure("a transfer stopped that nobody asked to stop")
        default:
            preconditionFailure("transfer ended (\(outcome)) in state \(state)")
        }
    }

    // MARK: Creation and recovery

    /// A download added paused, or found queued by a process that does not continue
    /// interrupted downloads: it waits, paused, before it was ever queued.
    mutating func heldBack() {
        guard case .queued = state else { preconditionFailure("held back in state \(state)") }
        state = .paused
    }

    /// Recovery found the download's file placed (the process died between the rename and
    /// recording it): it is completed.
    mutating func foundPlaced() {
        guard !publicState.isTerminal, !holdsSlot else { preconditionFailure("found placed in state \(state)") }
        state = .completed
    }

    // MARK: Caller requests

    /// Stop, keeping bytes and resume state.
    mutating func pause() -> Action {
        switch state {
        case .queued:
            state = .paused
            return .holdInQueue(then: .reportPaused)
        case .running, .stopping(.restart):
            // A restart under way becomes a pause; the caller waits for the same transfer's end.
            state = .stopping(.pause)
            return .stopTransfer
        case .waitingToRetry, .waitingForServer, .dueForSlot:
            // Whichever phase: the timer (if pending) is canceled and any slot or precedence
            // given back; the download keeps a place in the queue, paused.
            state = .paused
            return .cancelRetryAndPause
        case .stopping(.pause), .paused:
            return .none
        case .stopping(.cancel):
            return .rejected(HaulError(.invalidState, "the download is being canceled"))
        case .completed, .failed, .canceled:
            return .rejected(HaulError(.invalidState, "a \(publicState.rawValue) download cannot be paused"))
        }
    }

    /// Queue a paused download again. Failed downloads may be retried this way too: their
    /// part file, if resumable, is continued.
    mutating func resume() -> Action {
        switch state {
        case .paused, .failed:
            state = .queued
            return .reportRequeued
        case .queued, .running, .waitingToRetry, .waitingForServer, .dueForSlot:
            // Already going: resuming twice is harmless.
            return .none
        case .stopping(.pause):
            return .rejected(HaulError(.invalidState, "the download is still stopping; resume it once it is paused"))
        case .stopping(.restart):
            // It starts again by itself.
            return .none
        case .stopping(.cancel):
            return .rejected(HaulError(.invalidState, "the download is being canceled"))
        case .completed, .canceled:
            return .rejected(HaulError(.invalidState, "a \(publicState.rawValue) download cannot be resumed"))
        }
    }

    /// Stop the running transfer and, once it has ended, start another in the same slot: the
    /// download's request changed. Only a running transfer needs this; in any other state the
    /// next transfer simply starts with the new request (`.none`).
    mutating func restart() -> Action {
        switch state {
        case .running:
            state = .stopping(.restart)
            return .stopTransfer
        case .stopping(.restart):
            return .none
        case .stopping(.pause), .stopping(.cancel):
            return .rejected(HaulError(.invalidState, "the download is stopping; change it once it has stopped"))
        case .queued, .waitingToRetry, .waitingForServer, .dueForSlot, .paused, .completed, .failed, .canceled:
            return .none
        }
    }

    /// Stop for good and delete the part file.
    mutating func cancel() -> Action {
        switch state {
        case .queued:
            state = .canceled
            return .leaveQueue(then: .discardAndReportCanceled)
        case .paused, .failed:
            state = .canceled
            return .discardAndReportCanceled
        case .running, .stopping(.pause), .stopping(.restart):
            state = .stopping(.cancel)
            return .stopTransfer
        case .waitingToRetry, .waitingForServer, .dueForSlot:
            state = .canceled
            return .cancelRetryAndDiscard
        case .stopping(.cancel), .canceled:
            return .none
        case .completed:
            return .rejected(HaulError(.invalidState, "a completed download cannot be canceled"))
        }
    }
}
