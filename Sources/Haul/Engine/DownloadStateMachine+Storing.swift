/// Which of the machine's actions change what the store must hold: the list lives with the
/// actions, so that a new action is classified where it is declared, not left to the manager.
extension DownloadStateMachine.Action {
    /// Whether carrying out this action changes the download's stored row (its state, error,
    /// attempts or bytes), so the manager writes it. Starting is not worth a write: recovery
    /// treats running and queued alike. Slot moves are not stored at all. A wrapping action
    /// (`giveUpSlot`, `reclaimSlot`, `leaveQueue`, `holdInQueue`) is not written itself: the
    /// action it wraps is carried out next and answers for itself.
    var isWrittenToStore: Bool {
        switch self {
        case .scheduleRetry, .cancelRetryAndPause, .cancelRetryAndDiscard, .reportPaused, .reportPausedBecause,
             .discardAndReportCanceled, .reportCompleted, .reportFailed, .reportRequeued, .restartTransfer:
            return true
        case .none, .rejected, .startTransfer, .stopTransfer, .giveUpSlot, .askForSlot, .handOverSlot, .reclaimSlot,
             .leaveQueue, .holdInQueue:
            return false
        }
    }
}
