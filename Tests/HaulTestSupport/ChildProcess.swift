import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, its stdout and stderr as ordered streams of
/// chunks, and its end as a wait status.
///
/// With Foundation's `Process` (terminationHandler plus readabilityHandler), most runs of this
/// suite on Linux hung for good once many tests started children at once, with every child
/// already reaped; this does the few things the tests need with plain system calls instead: pipes created close-on-exec (so that no
/// child inherits another test's pipe and holds its end-of-file hostage), one blocking reader
/// thread per pipe, and one thread blocked in `waitpid`. Dedicated threads, not the
/// cooperative pool, because they block.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let stdout: AsyncStream<Data>
    public let stderr: AsyncStream<Data>
    /// Yields the raw wait status once, when the process has ended.
    public let exit: AsyncStream<Int32>

    /// Starts `executable` with `arguments`, in `directory` (default: this process's), with
    /// `input` (default: none) on its standard input, and this process's environment with
    /// `environment` set over it.
    public init(
        executable: String, arguments: [String], directory: String? = nil, input: Data? = nil, environment: [String: String] = [:]
    ) throws {
        let stdinPipe = try Self.makePipe()
        let stdoutPipe = try Self.makePipe()
        let stderrPipe = try Self.makePipe()

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, 2)
        if let directory { try Self.addChangeDirectory(&actions, directory) }
        Self.addCloseOthers(&actions)

        // The child starts with default signal handling and nothing blocked, whatever the
        // test runner set for itself.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, given in given }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var spawned: pid_t = 0
        let result = posix_spawn(&spawned, executable, &actions, &attributes, argv, envp)
        close(stdinPipe.read)
        close(stdoutPipe.write)
        close(stderrPipe.write)
        guard result == 0 else {
            close(stdinPipe.write)
            close(stdoutPipe.read)
            close(stderrPipe.read)
            throw ChildProcessError("posix_spawn \(executable) failed: \(String(cString: strerror(result)))")
        }
        let pid = spawned
        self.pid = pid
        LiveChildren.started(pid)

        if let input {
            input.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(stdinPipe.write, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { break }
                    offset += written
                }
            }
        }
        close(stdinPipe.write)

        stdout = Self.reader(stdoutPipe.read)
        stderr = Self.reader(stderrPipe.read)
        let (exit, exitContinuation) = AsyncStream<Int32>.makeStream()
        self.exit = exit
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            LiveChildren.ended(pid)
            exitContinuation.yield(status)
            exitContinuation.finish()
        }
    }

    public func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Exit code when the process exited normally.
    public static func exitCode(_ status: Int32) -> Int32? {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
    }

    /// The signal that ended the process, when one did.
    public static func terminatingSignal(_ status: Int32) -> Int32? {
        let signal = status & 0x7f
        return signal != 0 && signal != 0x7f ? signal : nil
    }

    /// Closes every descriptor above 2 in the child. SwiftNIO opens its sockets without
    /// close-on-exec, so without this every child inherits the sockets the tests have open at
    /// that moment: a WebSocket or HTTP connection the test then closes stays open in the child,
    /// and its server sees no end until the child exits (seconds later, in the whole suite).
    /// glibc has `posix_spawn_file_actions_addclosefrom_np` since 2.34 but Swift's Glibc module
    /// does not export it, hence the lookup.
    private static func addCloseOthers(_ actions: inout posix_spawn_file_actions_t) {
        #if canImport(Glibc)
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        // RTLD_DEFAULT: the symbol wherever it is loaded.
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        #endif
    }

    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        // pipe2(O_CLOEXEC) is not exported to Swift; the window before fcntl only risks a
        // delayed end-of-file, until a child spawned in between exits.
        #if canImport(Glibc)
        let created = Glibc.pipe(&fds)
        #else
        let created = Darwin.pipe(&fds)
        #endif
        guard created == 0 else { throw ChildProcessError("pipe failed: errno \(errno)") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// Makes the child start in `directory`. glibc has had
    /// `posix_spawn_file_actions_addchdir_np` since 2.29, but its header hides it behind
    /// `_GNU_SOURCE`, so Swift cannot see it: look it up at run time.
    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t, _ directory: String) throws {
        #if canImport(Glibc)
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            throw ChildProcessError("posix_spawn_file_actions_addchdir_np is missing (glibc older than 2.29)")
        }
        let addChdir = unsafeBitCast(symbol, to: AddChdir.self)
        guard addChdir(&actions, directory) == 0 else { throw ChildProcessError("cannot set the child's directory") }
        #else
        guard posix_spawn_file_actions_addchdir_np(&actions, directory) == 0 else {
            throw ChildProcessError("cannot set the child's directory")
        }
        #endif
    }

    /// Reads `fd` to end of file on its own thread, yielding chunks in order.
    private static func reader(_ fd: Int32) -> AsyncStream<Data> {
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                continuation.yield(Data(buffer[0..<count]))
            }
            close(fd)
            continuation.finish()
        }
        return stream
    }
}

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
