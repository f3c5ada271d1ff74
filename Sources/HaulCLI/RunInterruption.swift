import Foundation
import Haul

/// What a `haul get` run's signal handler and its event loop share.
///
/// Signals arrive on Dispatch's queue while the loop reads the manager's events. Passing each
/// event through a second stream, only so that the rare signal could join them, cost a task
/// hop per event; instead the handler acts on the manager itself and leaves a note the loop
/// reads. The reporter stays the loop's alone.
final class RunInterruption: @unchecked Sendable {
    /// What the handler does with a signal.
    enum Reaction {
        /// The first: stop the transfers through `shutdown()`, which checkpoints them.
        case stop(DownloadManager?)
        /// A second: the user will not wait for the checkpoints.
        case exitNow
        /// The group completed first: the run is ending anyway and its result stands.
        case ignore
    }

    private let lock = NSLock()
    private var signalNumber: Int32?
    private var settled = false
    private var manager: DownloadManager?

    /// The signal that interrupted the run, if one did.
    var interruption: Int32? { lock.withLock { signalNumber } }

    /// Records a signal and says what to do about it.
    func received(_ number: Int32) -> Reaction {
        lock.withLock {
            if signalNumber != nil { return .exitNow }
            if settled { return .ignore }
            signalNumber = number
            return .stop(manager)
        }
    }

    /// The manager is open: a signal from now on stops it. Returns false if a signal came
    /// before, and the caller must stop it itself.
    func managerOpened(_ manager: DownloadManager) -> Bool {
        lock.withLock {
            self.manager = manager
            return signalNumber == nil
        }
    }

    /// The group completed (or every download ended): a later signal changes nothing. Returns
    /// false if a signal came first, and the run counts as interrupted.
    func settle() -> Bool {
        lock.withLock {
            guard signalNumber == nil else { return false }
            settled = true
            return true
        }
    }
}
