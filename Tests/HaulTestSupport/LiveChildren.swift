import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The children of this test process that have not ended yet, killed when the process exits.
///
/// A test's watchdogs (kill a child that outlives its time limit) are tasks of the test process:
/// when that process ends first (the run finished while a test that had thrown left its child
/// behind), nothing would stop the child, and a `haul get --max-tries 0` retries for good. The
/// `atexit` handler kills every child still running, so a run leaves none of its processes on
/// the machine. A test process that crashes runs no `atexit` handler: its children are left to
/// `scripts/test`, which kills the test run's process group when it ends.
enum LiveChildren {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: Set<pid_t> = []
    nonisolated(unsafe) private static var handlerInstalled = false

    /// Records a child that has just been started.
    static func started(_ pid: pid_t) {
        lock.lock()
        defer { lock.unlock() }
        running.insert(pid)
        if !handlerInstalled {
            handlerInstalled = true
            atexit { LiveChildren.killAll() }
        }
    }

    /// Forgets a child that has been reaped, so that its process ID, free for reuse, is never
    /// signalled.
    static func ended(_ pid: pid_t) {
        lock.lock()
        defer { lock.unlock() }
        running.remove(pid)
    }

    private static func killAll() {
        lock.lock()
        let left = running
        lock.unlock()
        for pid in left { kill(pid, SIGKILL) }
    }
}
