/// How a download takes a changed request (aria2's `changeOption`, `changeUri`), decided by
/// the machine: the manager carries the plan out.
extension DownloadStateMachine {
    /// The way a new request replaces the current one.
    enum ReplacementPlan: Sendable, Hashable {
        /// Stop the running transfer and start the next from the new request in the same slot;
        /// `joining` when such a restart is already under way (the last change wins).
        case restartInSlot(joining: Bool)
        /// The request moves to another host, whose limit must count: pause, swap the request,
        /// and queue again for a slot there.
        case pauseSwapAndRequeue
        /// No transfer runs: swap the request in place (`idleReplacementRefusal` says whether
        /// the state allows it).
        case swapInPlace
    }

    /// The plan for a new request; `sameHost` when its URL keeps the download's host.
    func replacementPlan(sameHost: Bool) -> ReplacementPlan {
        switch (state, sameHost) {
        case (.running, true):
            return .restartInSlot(joining: false)
        case (.stopping(.restart), true):
            return .restartInSlot(joining: true)
        case (.running, false), (.waitingToRetry, false), (.waitingForServer, false), (.dueForSlot, false):
            return .pauseSwapAndRequeue
        default:
            return .swapInPlace
        }
    }

    /// Whether the request may be swapped now, no transfer running: nil when it may (queued,
    /// paused, or waiting to retry), or the error to answer.
    func idleReplacementRefusal(of id: DownloadID) -> HaulError? {
        switch state {
        case .queued, .paused, .waitingToRetry, .waitingForServer, .dueForSlot:
            return nil
        case .completed, .failed, .canceled:
            return HaulError(.invalidState, "a \(publicState.rawValue) download cannot be changed")
        case .running, .stopping:
            return HaulError(.invalidState, "download \(id) is starting or stopping; change it once it has")
        }
    }
}
