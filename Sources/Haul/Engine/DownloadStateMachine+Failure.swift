import Foundation

/// How a failed transfer goes on, decided by the machine: wait for someone (a full disk), try
/// again (the retry policy's quick retries, then waiting for the server), or fail. The manager
/// gathers the facts (`FailedAttempt`) and carries out the verdict; it chooses nothing itself.
extension DownloadStateMachine {
    /// What the choice after a failed transfer depends on, gathered by the manager: the
    /// attempt's error, the download's history, and the moment and jitter the policy uses.
    struct FailedAttempt: Sendable, Hashable {
        /// The error the attempt ended with.
        var error: HaulError
        /// Attempts made so far, the failed one included.
        var attemptsMade: Int
        /// When the download was added: the start of its resource timeout.
        var addedAt: Date
        /// The download's own deadline for waiting (`DownloadRequest.waitDeadline`), if any.
        var requestDeadline: Date?
        /// Now, as the policy should see it.
        var now: Date
        /// A random number in [0, 1) spreading the backoff of downloads that fail together.
        var jitter: Double
        /// The part file's lock is held by another writer (`PartFile.isHeldElsewhere`).
        var partFileHeldElsewhere = false
        /// The download runs under a fleet lease (`docs/fleet.md`): no other daemon may run it.
        var leased = false
    }

    /// The machine's answer to a failed transfer.
    struct FailureVerdict: Sendable, Hashable {
        /// What the manager does next.
        var action: Action
        /// The error the download shows from now on, set before the action is carried out
        /// (the attempt's while it retries, or the one it fails with); nil when the action sets
        /// its own (a download paused until someone acts).
        var recordedError: HaulError?
    }

    /// The transfer failed. A full disk or a broken file system cannot be helped by retrying:
    /// the download waits, paused, with every durable byte kept. Anything else goes by the
    /// retry policy. A download told to stop meanwhile stops as it was told.
    mutating func transferFailed(_ failed: FailedAttempt, policy: RetryPolicy) -> FailureVerdict {
        if failed.partFileHeldElsewhere, failed.leased, failed.attemptsMade < Self.heldPartAttempts {
            // The previous owner of a download taken over is still stopping its transfer (a
            // daemon that lost the lease, on this machine): it lets go of the file shortly.
            let action = transferEnded(.failed(failed.error, retryDelay: Self.heldPartRetryDelay, waiting: false))
            return FailureVerdict(action: action, recordedError: failed.error)
        }
        if Self.blocksUntilSomeoneActs(failed.error) {
            return FailureVerdict(action: transferEnded(.blocked(failed.error)), recordedError: nil)
        }
        let decision = policy.decide(
            after: failed.error, nextAttempt: failed.attemptsMade + 1, addedAt: failed.addedAt,
            requestDeadline: failed.requestDeadline, now: failed.now, jitter: failed.jitter)
        let error = decision.error(for: failed.error)
        let action = transferEnded(.failed(error, retryDelay: decision.delay, waiting: decision.isWaiting))
        return FailureVerdict(action: action, recordedError: error)
    }

    /// How long a leased download waits before it tries again a part file another writer holds.
    static let heldPartRetryDelay: Duration = .seconds(1)
    /// Attempts after which a leased download stops waiting for a part file another writer
    /// holds and fails as any download would: a writer that is not a stopping previous owner
    /// (another program) does not let go.
    static let heldPartAttempts = 60

    /// Errors that no retry can cure until someone frees space or fixes the file system.
    static func blocksUntilSomeoneActs(_ error: HaulError) -> Bool {
        error.code == .diskFull || error.code == .fileSystem
    }

    /// A retry timer woke: the next attempt goes ahead only if the download still waits for
    /// it (nil otherwise). A timer canceled after it woke must not restart a download that was
    /// paused or canceled meanwhile.
    mutating func retryTimerFiredIfWaiting() -> Action? {
        switch state {
        case .waitingToRetry, .waitingForServer: return retryTimerFired()
        default: return nil
        }
    }
}
