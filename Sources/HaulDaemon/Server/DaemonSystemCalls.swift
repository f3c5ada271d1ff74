#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The POSIX calls the daemon makes itself, in one place: directory modes and ownership, the
/// socket file, lock files (`flock`) and the peer credentials of a unix-socket connection.
#if canImport(Glibc)
/// glibc's mallopt, which Swift's Glibc module does not export.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

enum DaemonSystemCalls {
    /// Caps glibc's malloc arenas (M_ARENA_MAX). By default glibc gives each thread that meets
    /// contention an arena of its own, up to eight per core, and each keeps the memory freed
    /// in it: a daemon that parses a client's batch of thousands of requests on one thread
    /// and the next batch on another then holds both batches' transient memory for good. Two
    /// arenas keep 100,000 queued downloads about 30 MiB smaller. Elsewhere: nothing.
    static func limitMallocArenas(_ count: Int32) {
        #if canImport(Glibc)
        _ = glibcMallopt(-8, count)  // M_ARENA_MAX
        #endif
    }

    /// What `lstat` says about a path (a final symlink is described, not followed).
    struct PathStatus: Sendable, Hashable {
        enum FileType: Sendable, Hashable { case directory, symlink, socket, regular, other }
        var type: FileType
        var ownerID: UInt32
        /// The permission bits (`0o777` part of the mode).
        var permissions: UInt32
        var device: UInt64
        var inode: UInt64
    }

    static var userID: UInt32 { UInt32(getuid()) }
    static var processID: Int32 { getpid() }

    /// Describes `path`, or returns nil when nothing is there.
    static func status(of path: String) throws(DaemonError) -> PathStatus? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw failure(.fileSystem, "cannot inspect \(path)")
        }
        let type: PathStatus.FileType = switch info.st_mode & S_IFMT {
        case S_IFDIR: .directory
        case S_IFLNK: .symlink
        case S_IFSOCK: .socket
        case S_IFREG: .regular
        default: .other
        }
        return PathStatus(
            type: type, ownerID: UInt32(info.st_uid), permissions: UInt32(info.st_mode) & 0o777,
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Creates one directory with `mode` (the umask cannot widen it, only narrow it; callers
    /// check and set the mode afterwards). Returns false when something already exists there.
    @discardableResult
    static func makeDirectory(_ path: String, mode: UInt32) throws(DaemonError) -> Bool {
        if mkdir(path, mode_t(mode)) == 0 { return true }
        if errno == EEXIST { return false }
        throw failure(.fileSystem, "cannot create the directory \(path)")
    }

    static func setPermissions(_ path: String, _ mode: UInt32, kind: DaemonError.Kind) throws(DaemonError) {
        guard chmod(path, mode_t(mode)) == 0 else { throw failure(kind, "cannot set the mode of \(path)") }
    }

    /// Removes a file; one that is already gone is not an error.
    static func removeFile(_ path: String) throws(DaemonError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure(.fileSystem, "cannot remove \(path)") }
    }

    // MARK: Lock files

    /// Opens (creating with mode 0600) a lock file. O_NOFOLLOW: a symlink planted at the lock's
    /// path must not make the daemon write its PID into another file.
    static func openLockFile(_ path: String) throws(DaemonError) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure(.fileSystem, "cannot open the lock file \(path)") }
        return fd
    }

    /// Takes an exclusive `flock` without waiting. Returns false when another open file
    /// description holds it (another daemon, even one in this same process).
    static func tryLock(_ fd: Int32, path: String) throws(DaemonError) -> Bool {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK: return false
            default: throw failure(.fileSystem, "cannot lock \(path)")
            }
        }
    }

    /// Replaces the file's contents with `text` (the lock holder's PID).
    static func replaceContents(_ fd: Int32, with text: String) {
        guard ftruncate(fd, 0) == 0 else { return }
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = pwrite(fd, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// The start of the file's contents, as text (at most 64 bytes: a PID and a newline).
    static func readSmallFile(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return "" }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #elseif canImport(Musl)
        _ = Musl.close(fd)
        #elseif canImport(Darwin)
        _ = Darwin.close(fd)
        #endif
    }

    // MARK: Open files

    /// Raises the soft limit on open files to the hard limit and returns the soft limit now.
    /// The soft limit is often 1,024 while the hard one is far higher: a daemon that keeps the
    /// low one runs out of descriptors when a local user opens a thousand idle connections,
    /// and then cannot accept its own user's calls on the unix socket. Where the hard limit
    /// is unlimited (macOS), the soft one goes to the kernel's per-process ceiling.
    @discardableResult
    static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0 else { return 1024 }
        var wanted = limit.rlim_max
        #if canImport(Darwin)
        wanted = min(wanted, rlim_t(OPEN_MAX))
        #endif
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(openFilesResource, &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    /// The soft limit on open files.
    static func openFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0 else { return 1024 }
        return UInt64(limit.rlim_cur)
    }

    #if canImport(Glibc)
    private static let openFilesResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let openFilesResource = RLIMIT_NOFILE
    #endif

    // MARK: Signals

    /// Switches off the default action of `signal` (ending the process), so that a Dispatch
    /// signal source can turn it into a graceful shutdown instead.
    static func ignoreDefaultAction(of signal: Int32) {
        _ = Self.signal(signal, SIG_IGN)
    }

    static let terminationSignals: [Int32] = [SIGTERM, SIGINT]

    #if canImport(Glibc)
    private static let signal = Glibc.signal
    #elseif canImport(Musl)
    private static let signal = Musl.signal
    #elseif canImport(Darwin)
    private static let signal = Darwin.signal
    #endif

    // MARK: Peer credentials

    /// The user ID of the process at the other end of a unix-socket connection, or nil where
    /// the platform or the channel cannot tell (then the socket's 0600 mode is the only guard).
    static func peerUserID(of channel: any Channel) async -> UInt32? {
        #if os(Linux)
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let credentials: PeerCredentials? = try? await provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)).get()
        return credentials?.uid
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// Linux's `struct ucred` (pid, uid, gid), which Glibc's Swift module hides behind
    /// `_GNU_SOURCE`; three 32-bit fields, laid out in this order by both languages.
    private struct PeerCredentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }
    #endif

    /// A `DaemonError` of `kind` for the current `errno`.
    static func failure(_ kind: DaemonError.Kind, _ context: String) -> DaemonError {
        DaemonError(kind, "\(context): \(errorText(errno))")
    }

    /// The system's sentence for an errno value.
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
