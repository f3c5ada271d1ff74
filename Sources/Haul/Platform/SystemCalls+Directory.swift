#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files named relative to an open directory, never through a symbolic link, and the advisory
/// lock that makes one process the writer of a part file.
///
/// Why by descriptor: anyone who can write into a download directory can put a link under a
/// part file's predictable name, or swap the directory itself for a link, between a check of
/// a path and its use. Names looked up in a directory descriptor with `O_NOFOLLOW` (and
/// `AT_SYMLINK_NOFOLLOW`) are the directory's own entries: a link is refused or removed as a
/// name, never followed to a file elsewhere.
extension SystemCalls {
    /// What `fstat`/`fstatat` say about a file, a final link described rather than followed.
    struct EntryStatus: Sendable, Hashable {
        enum Kind: Sendable, Hashable { case regular, directory, symlink, other }
        var kind: Kind
        var identity: FileIdentity
        var size: Int64
        var links: UInt64
        var ownerID: UInt32
        /// The inode's change time (ctime) in nanoseconds: every write, truncation or rename
        /// moves it, and no user can set it, so a file that still has the one seen at close
        /// was not written by anyone since.
        var changeTime: Int64
    }

    #if os(Linux)
    /// Linux's O_PATH (the same value on every architecture Swift runs on), which Glibc's
    /// Swift module hides behind `_GNU_SOURCE`: a descriptor for a place, usable with the
    /// `*at` calls, that needs no read permission.
    private static let linuxOPath: Int32 = 0o10000000
    #endif

    /// The user files are created as, to tell the process's own part files from planted ones.
    /// Read once: Haul never changes its user, and every part file opened compared it.
    static let effectiveUserID = UInt32(geteuid())

    /// Opens a directory for the calls below. Links in `path` are followed: the user named it.
    static func openDirectory(_ path: String) throws(HaulError) -> Int32 {
        #if os(Linux)
        // O_PATH: a directory the user may enter but not list still works.
        let flags = linuxOPath | O_DIRECTORY | O_CLOEXEC
        #else
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC
        #endif
        let fd = path.withCString { open($0, flags) }
        guard fd >= 0 else { throw error(errno, "cannot open the directory \(path)") }
        return fd
    }

    /// A directory just opened (by `openDirectory` or `openDirectoryWithoutLinks`) with its
    /// status; closed when the status cannot be read.
    static func withStatus(_ directory: Int32, path: String) throws(HaulError) -> (descriptor: Int32, status: EntryStatus) {
        do {
            return (directory, try status(directory, path: path))
        } catch {
            close(directory)
            throw error
        }
    }

    /// Opens an absolute directory path one component at a time from `/`, following no
    /// symbolic link anywhere in it: for a directory that was resolved when its download was
    /// added, a link put in place of any part of it since fails here instead of leading the
    /// download's writes elsewhere.
    static func openDirectoryWithoutLinks(_ path: String) throws(HaulError) -> Int32 {
        guard path.hasPrefix("/") else { return try openDirectory(path) }
        #if os(Linux)
        let flags = linuxOPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        #else
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        #endif
        var current = open("/", flags)
        guard current >= 0 else { throw error(errno, "cannot open the directory /") }
        for component in path.split(separator: "/") where component != "." {
            // O_NOFOLLOW with O_DIRECTORY: a link is refused (ELOOP, or ENOTDIR with O_PATH).
            let next = component == ".." ? -1 : String(component).withCString { openat(current, $0, flags) }
            let code = errno
            close(current)
            guard next >= 0 else {
                if component == ".." || code == ELOOP || code == ENOTDIR {
                    throw HaulError(
                        .directoryNotFound,
                        "cannot open the directory \(path): '\(component)' in it is not a directory but a link or something else now (it was resolved when the download was added); nothing is written there")
                }
                throw error(code, "cannot open the directory \(path)")
            }
            current = next
        }
        return current
    }

    /// How opening a directory entry went, for the outcomes a caller acts on.
    enum EntryOpening: Sendable, Hashable {
        case opened(Int32)
        /// The name is a symbolic link: it was not followed.
        case link
        /// Nothing has the name (when not creating).
        case missing
        /// Something has the name already (when creating).
        case exists
    }

    /// Opens the entry `name` of `directory` for reading and writing, never through a link.
    /// `create`: make it (mode 0644), and only if nothing, a link included, has the name.
    static func openEntry(in directory: Int32, _ name: String, create: Bool, path: String) throws(HaulError) -> EntryOpening {
        // O_NONBLOCK only keeps a planted FIFO from blocking the open of an existing entry;
        // one made here (O_EXCL) is a new regular file, opened without it.
        var flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC
        flags |= create ? O_CREAT | O_EXCL : O_NONBLOCK
        while true {
            let fd = name.withCString { openat(directory, $0, flags, 0o644) }
            if fd >= 0 {
                // Files ignore O_NONBLOCK; it is the only status flag opened with, so clearing
                // them all clears it without reading them first.
                if !create { _ = fcntl(fd, F_SETFL, 0) }
                return .opened(fd)
            }
            let code = errno
            switch code {
            case EINTR: continue
            case ELOOP: return .link
            case EEXIST where create: return .exists
            case ENOENT where !create: return .missing
            default: throw error(code, "cannot open \(path)")
            }
        }
    }

    /// Describes an open file.
    static func status(_ fd: Int32, path: String) throws(HaulError) -> EntryStatus {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error(errno, "cannot stat \(path)") }
        return entryStatus(info)
    }

    /// Describes an open file, with its modification time (seconds since 1970): one `fstat`
    /// for what a verified part file records and what its transfer notes as left.
    static func statusAndModified(_ fd: Int32, path: String) throws(HaulError) -> (status: EntryStatus, modified: Double) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error(errno, "cannot stat \(path)") }
        #if canImport(Darwin)
        let modified = Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
        return (entryStatus(info), modified)
    }

    /// Describes the entry `name` of `directory` without following a link; nil when absent.
    static func status(in directory: Int32, _ name: String) -> EntryStatus? {
        var info = stat()
        guard name.withCString({ fstatat(directory, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else { return nil }
        return entryStatus(info)
    }

    /// Removes the entry `name` (a link itself, never its target); a missing one is no error.
    static func removeEntry(in directory: Int32, _ name: String, path: String) throws(HaulError) {
        guard name.withCString({ unlinkat(directory, $0, 0) }) == 0 || errno == ENOENT else {
            throw error(errno, "cannot remove \(path)")
        }
    }

    /// Renames `from` to `to` inside `directory`, atomically, failing with `.fileExists`
    /// instead of replacing an existing entry.
    ///
    /// Darwin has renameatx_np(RENAME_EXCL), Linux renameat2(RENAME_NOREPLACE): one system
    /// call. Where the file system refuses that flag, a hard link makes the final name appear
    /// atomically (link fails with EEXIST rather than replace), then the part name is removed;
    /// file systems without hard links fall back to check-then-rename, which is only racy
    /// against another writer of the same name.
    ///
    /// `path` names the destination in errors only: worked out when one is thrown.
    static func renameNoReplace(in directory: Int32, from: String, to: String, path: @autoclosure () -> String) throws(HaulError) {
        #if canImport(Darwin)
        if renameatx_np(directory, from, directory, to, UInt32(RENAME_EXCL)) == 0 { return }
        let code = errno
        if code == EEXIST { throw HaulError(.fileExists, "\(path()) already exists") }
        guard code == ENOTSUP || code == EINVAL else { throw error(code, "cannot move \(from) to \(path())") }
        #else
        #if canImport(Glibc)
        let renameNoReplace: UInt32 = 1
        let renameCode: Int32 = from.withCString { from in
            to.withCString { to in glibcRenameat2(directory, from, directory, to, renameNoReplace) == 0 ? 0 : errno }
        }
        if renameCode == 0 { return }
        if renameCode == EEXIST { throw HaulError(.fileExists, "\(path()) already exists") }
        guard renameCode == EINVAL || renameCode == ENOSYS || renameCode == ENOTSUP || renameCode == EOPNOTSUPP else {
            throw error(renameCode, "cannot move \(from) to \(path())")
        }
        #endif
        // linkat without AT_SYMLINK_FOLLOW links the entry itself, never a link's target.
        if linkat(directory, from, directory, to, 0) == 0 {
            _ = unlinkat(directory, from, 0)
            return
        }
        let code = errno
        if code == EEXIST { throw HaulError(.fileExists, "\(path()) already exists") }
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EMLINK else {
            throw error(code, "cannot move \(from) to \(path())")
        }
        #endif
        if status(in: directory, to) != nil { throw HaulError(.fileExists, "\(path()) already exists") }
        try renameReplacing(in: directory, from: from, to: to, path: path())
    }

    /// Renames `from` to `to` inside `directory`, atomically replacing whatever has that name
    /// (a link is replaced, not written through). `path` names the destination in errors only.
    static func renameReplacing(in directory: Int32, from: String, to: String, path: @autoclosure () -> String) throws(HaulError) {
        let code: Int32 = from.withCString { from in
            to.withCString { to in renameat(directory, from, directory, to) == 0 ? 0 : errno }
        }
        guard code == 0 else { throw error(code, "cannot move \(from) to \(path())") }
    }

    /// Takes an exclusive advisory lock (`flock`) on an open file, waiting at most a moment. Returns
    /// false when another open file description holds it: another process, or another open
    /// of the same file. The kernel releases it when the descriptor closes, `kill -9` included.
    ///
    /// A lock that stays taken is tried again for a moment (about 0.13 s in all) before the
    /// answer is no: a process being started by this one, anywhere in it (a daemon, a tool,
    /// the app's own), shares every open file from its fork until its exec closes them, and
    /// so holds the lock of a part file this process closed in between. That lasts
    /// microseconds on an idle machine, milliseconds on a loaded one; another writer that
    /// really holds the file holds it far longer.
    static func tryLock(_ fd: Int32, path: String) throws(HaulError) -> Bool {
        var pause: UInt32 = 1000
        while true {
            if try lockOnce(fd, path: path) { return true }
            guard pause <= 64_000 else { return false }
            usleep(pause)
            pause *= 2
        }
    }

    private static func lockOnce(_ fd: Int32, path: String) throws(HaulError) -> Bool {
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK: return false
            default: throw error(errno, "cannot lock \(path)")
            }
        }
    }

    private static func entryStatus(_ info: stat) -> EntryStatus {
        let kind: EntryStatus.Kind = switch info.st_mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFLNK: .symlink
        default: .other
        }
        #if canImport(Darwin)
        let changeTime = Int64(info.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(info.st_ctimespec.tv_nsec)
        #else
        let changeTime = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        #endif
        return EntryStatus(
            kind: kind, identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)),
            size: Int64(info.st_size), links: UInt64(info.st_nlink), ownerID: UInt32(info.st_uid), changeTime: changeTime)
    }
}
