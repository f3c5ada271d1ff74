/// A download found in the store after a restart: which state its machine resumes in and
/// where it goes in the queue, decided here so that recovery only carries it out.
extension DownloadStateMachine {
    /// The state of a download stored as `stored`: a running or queued one is queued again
    /// (its transfer died with the process); the rest keep their state, a failed one with
    /// its stored `error` (or a generic one if none was stored).
    static func restoredState(_ stored: DownloadState, error: HaulError?) -> State {
        switch stored {
        case .queued, .running: return .queued
        case .paused: return .paused
        case .completed: return .completed
        case .failed: return .failed(error ?? HaulError(.connectionFailed, "failed before the restart"))
        case .canceled: return .canceled
        }
    }

    /// The download was just loaded. A process that does not continue interrupted downloads
    /// holds a queued one back, paused, until someone resumes it.
    mutating func restored(continueInterrupted: Bool) {
        if !continueInterrupted, state == .queued { heldBack() }
    }

    /// Where a restored download goes in the scheduler's queue.
    enum RestoredPlace: Sendable, Hashable {
        /// Waiting for a slot.
        case waiting
        /// Keeping its place without starting (paused).
        case held
    }

    /// The restored download's place in the queue (after reconciling it with the disk); nil
    /// when it has none (finished).
    var restoredPlace: RestoredPlace? {
        if publicState == .queued { return .waiting }
        return state == .paused ? .held : nil
    }
}
