/// The machine's part in requests that concern the queue as a whole (aria2's `pauseAll`,
/// `changePosition`): which downloads they touch and how, decided here so that the manager
/// only carries it out.
extension DownloadStateMachine {
    /// One download's share of pausing everything.
    struct BulkPause: Sendable, Hashable {
        /// What the manager does now.
        var action: Action
        /// It had started (running, or waiting for its server): once paused it goes to the
        /// front of the queue with the others that ran, in the order they were added.
        var ran: Bool
        /// Its transfer must end before everything counts as paused.
        var awaitsStop: Bool
    }

    /// Pause everything: a queued or running download pauses (waiting for its server counts as
    /// queued); a paused, finished or canceling one is left alone (nil).
    mutating func pauseAllRequested() -> BulkPause? {
        guard publicState == .queued || publicState == .running else { return nil }
        let ran = isUnderway
        let action = pause()
        if case .rejected = action { return nil }
        return BulkPause(action: action, ran: ran, awaitsStop: action == .stopTransfer)
    }

    /// Whether the download may move in the waiting queue (`DownloadManager.moveInQueue`): nil
    /// when it may, or the error to answer. Only queued and paused downloads with a place in
    /// the queue move; one waiting for its server takes the next free slot ahead of the
    /// queue, which is precedence, not a place. `returning` and `hasPlace` are the scheduler's.
    func queueMoveRefusal(of id: DownloadID, returning: Bool, hasPlace: Bool) -> HaulError? {
        if returning {
            return HaulError(.invalidState, "download \(id) is waiting for its server; it takes the next free slot once its retry is due, ahead of the queue, so it cannot be moved in it (pause it first)")
        }
        guard state == .queued || state == .paused, hasPlace else {
            return HaulError(.invalidState, "download \(id) is \(publicState.rawValue), not waiting in the queue")
        }
        return nil
    }
}
