#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few system calls Haul makes directly, in one place so that the rest of the library
/// stays portable: Foundation's FileHandle cannot write a NIO buffer without copying, cannot
/// rename without replacing, and reports errors without their errno.
#if canImport(Glibc)
/// glibc's malloc_trim, which Swift's Glibc module does not export.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

/// glibc's renameat2 (2.28 and later), which Swift's Glibc module does not export either.
@_silgen_name("renameat2")
func glibcRenameat2(
    _ fromDirectory: Int32, _ from: UnsafePointer<CChar>, _ toDirectory: Int32, _ to: UnsafePointer<CChar>, _ flags: UInt32
) -> Int32
#endif

enum SystemCalls {
    /// Returns memory that was freed (after a bulk write's transient buffers and page cache)
    /// to the system, so that a process holding a large backlog shows what it really keeps.
    /// glibc keeps freed memory mapped otherwise; elsewhere this does nothing.
    static func releaseFreedMemory() {
        #if canImport(Glibc)
        _ = glibcMallocTrim(0)
        #endif
    }

    static func close(_ fd: Int32) {
        _ = closeFile(fd)
    }

    /// Writes every byte, retrying short writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(HaulError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw error(errno, "cannot write \(path)")
            }
            offset += written
        }
    }

    /// Writes every byte at `offset` without moving the file position, retrying short writes
    /// and EINTR: the connections of a segmented download write one file side by side.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(HaulError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
            if written < 0 {
                if errno == EINTR { continue }
                throw error(errno, "cannot write \(path)")
            }
            done += written
        }
    }

    /// Reads up to `count` bytes at `offset`; returns the number read (0 at end of file).
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String) throws(HaulError) -> Int {
        while true {
            let count = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
            if count < 0 {
                if errno == EINTR { continue }
                throw error(errno, "cannot read \(path)")
            }
            return count
        }
    }

    /// Cuts the file to `length` bytes and moves the write position there.
    ///
    /// A file that already has that length is not truncated: on ext4, truncating to zero marks
    /// the file so that closing it forces its data to disk (the "replace via truncate"
    /// heuristic), which made every new, empty part file of a small download wait for a disk
    /// write at close.
    static func truncate(_ fd: Int32, to length: Int64, path: String) throws(HaulError) {
        if try size(fd, path: path) != length {
            guard ftruncate(fd, off_t(length)) == 0 else { throw error(errno, "cannot truncate \(path)") }
        }
        try seek(fd, to: length, path: path)
    }

    /// Moves the write position to `offset`.
    static func seek(_ fd: Int32, to offset: Int64, path: String) throws(HaulError) {
        guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else { throw error(errno, "cannot seek in \(path)") }
    }

    struct FileIdentity: Sendable, Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// Identity, size and modification time of a path (not following a final symlink), or nil.
    static func describe(_ path: String) -> (identity: FileIdentity, size: Int64, modified: Double)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return described(info)
    }

    /// Identity, size and modification time of an open file: what a verified part file will
    /// show once renamed into place (a rename changes neither), read before the rename.
    static func describe(_ fd: Int32, path: String) throws(HaulError) -> (identity: FileIdentity, size: Int64, modified: Double) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error(errno, "cannot stat \(path)") }
        return described(info)
    }

    /// Identity, size and modification time (seconds since 1970) from a `stat` result.
    private static func described(_ info: stat) -> (identity: FileIdentity, size: Int64, modified: Double) {
        #if canImport(Darwin)
        let modified = Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
        return (FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), Int64(info.st_size), modified)
    }

    static func size(_ fd: Int32, path: String) throws(HaulError) -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error(errno, "cannot stat \(path)") }
        return Int64(info.st_size)
    }

    /// Flushes the file's data to the device: the "data" half of "data before metadata".
    static func sync(_ fd: Int32, path: String) throws(HaulError) {
        guard fsync(fd) == 0 else { throw error(errno, "cannot flush \(path) to disk") }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func removeFile(_ path: String) throws(HaulError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw error(errno, "cannot remove \(path)") }
    }

    static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Whether `path` is an existing directory the process can create files in.
    static func directoryStatus(_ path: String) -> (exists: Bool, writable: Bool) {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return (false, false) }
        return (true, access(path, W_OK | X_OK) == 0)
    }

    /// Maps an errno to Haul's error codes: a full disk must read as such.
    static func error(_ code: Int32, _ context: String) -> HaulError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT: return HaulError(.diskFull, "\(context): \(reason)")
        case EACCES, EPERM, EROFS: return HaulError(.permissionDenied, "\(context): \(reason)")
        case EEXIST: return HaulError(.fileExists, "\(context): \(reason)")
        case ENOENT, ENOTDIR: return HaulError(.directoryNotFound, "\(context): \(reason)")
        default: return HaulError(.fileSystem, "\(context): \(reason)")
        }
    }

    private static func closeFile(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        return Glibc.close(fd)
        #elseif canImport(Musl)
        return Musl.close(fd)
        #elseif canImport(Darwin)
        return Darwin.close(fd)
        #endif
    }
}
