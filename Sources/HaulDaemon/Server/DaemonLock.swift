import Foundation

/// An exclusive lock on a lock file, held for as long as the daemon runs.
///
/// One daemon per state directory (two would write the same store and run the same downloads
/// twice) and one per socket (the second would unlink the first one's socket and take over its
/// clients). `flock` is released by the kernel when the process dies, `kill -9` included, so a
/// crashed daemon never leaves a lock behind: a file that exists but is not locked is free. The
/// file holds the PID of the daemon that has it, for the message the next one prints.
///
/// The file itself is left in place when the daemon stops: removing it would let a daemon that
/// opened the old file and one that creates a new one both believe they hold the lock.
final class DaemonLock {
    let path: String
    private var descriptor: Int32?

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock at `path`, or throws `.alreadyRunning` naming the holder's PID.
    ///
    /// - Parameter guarding: what the lock protects, for the message ("the state directory /x").
    static func acquire(at path: String, guarding subject: String) throws(DaemonError) -> DaemonLock {
        let fd = try DaemonSystemCalls.openLockFile(path)
        let locked: Bool
        do {
            locked = try DaemonSystemCalls.tryLock(fd, path: path)
        } catch {
            DaemonSystemCalls.closeDescriptor(fd)
            throw error
        }
        guard locked else {
            let holder = DaemonSystemCalls.readSmallFile(fd).trimmingCharacters(in: .whitespacesAndNewlines)
            DaemonSystemCalls.closeDescriptor(fd)
            let who = Int32(holder).map { "another haul daemon (PID \($0))" } ?? "another haul daemon"
            throw DaemonError(.alreadyRunning, "\(who) is already using \(subject) (lock file \(path))")
        }
        DaemonSystemCalls.replaceContents(fd, with: "\(DaemonSystemCalls.processID)\n")
        return DaemonLock(path: path, descriptor: fd)
    }

    /// Gives the lock up; the file stays.
    func release() {
        guard let descriptor else { return }
        DaemonSystemCalls.closeDescriptor(descriptor)
        self.descriptor = nil
    }

    deinit { release() }
}
