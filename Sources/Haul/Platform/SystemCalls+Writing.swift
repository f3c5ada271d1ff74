import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files Haul writes whole into a download directory (local playlists, joined media): made
/// under a fresh random name with `O_CREAT | O_EXCL | O_NOFOLLOW` inside the directory's
/// descriptor, then renamed over their name there. Nothing planted under a predictable name can
/// redirect the write, and a reader sees the old file or the new one, never half of one.
extension SystemCalls {
    /// A file being written: its directory and its own descriptors, and its temporary name.
    struct TemporaryFile {
        let directory: Int32
        let handle: FileHandle
        let name: String
        let directoryPath: String

        /// Writes `data` at the end.
        func write(_ data: Data) throws(HaulError) {
            do {
                try handle.write(contentsOf: data)
            } catch {
                throw HaulError(.fileSystem, "cannot write in \(directoryPath): \(error.localizedDescription)", underlying: error)
            }
        }

        /// Flushes it, closes it and renames it over `finalName`, replacing what was there (a
        /// link there is replaced, not written through).
        func commit(as finalName: String, sync: Bool) throws(HaulError) {
            defer { close(directory) }
            do {
                if sync { try handle.synchronize() }
                try handle.close()
            } catch {
                _ = unlinkat(directory, name, 0)
                throw HaulError(.fileSystem, "cannot write \(finalName) in \(directoryPath): \(error.localizedDescription)", underlying: error)
            }
            do {
                try renameReplacing(in: directory, from: name, to: finalName, path: directoryPath + "/" + finalName)
            } catch {
                _ = unlinkat(directory, name, 0)
                throw error
            }
        }

        /// Closes and deletes it.
        func discard() {
            try? handle.close()
            _ = unlinkat(directory, name, 0)
            close(directory)
        }
    }

    /// A new file under a random name in `directoryPath`, for `commit(as:sync:)`.
    static func temporaryFile(in directoryPath: String) throws(HaulError) -> TemporaryFile {
        let directory = try openDirectory(directoryPath)
        for _ in 0..<8 {
            let name = ".haul-\(UInt64.random(in: 0...UInt64.max).hexPadded).tmp"
            let fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 {
                return TemporaryFile(
                    directory: directory, handle: FileHandle(fileDescriptor: fd, closeOnDealloc: true), name: name,
                    directoryPath: directoryPath)
            }
            guard errno == EEXIST else {
                let failure = error(errno, "cannot create a file in \(directoryPath)")
                close(directory)
                throw failure
            }
        }
        close(directory)
        throw HaulError(.fileSystem, "cannot create a file with a new name in \(directoryPath)")
    }

    /// Opens an existing regular file for reading and writing, refusing a link in its place.
    static func openForUpdateWithoutFollowing(_ path: String) throws(HaulError) -> FileHandle {
        let fd = path.withCString { open($0, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { throw error(errno, "cannot open \(path)") }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Renames a file over another in the same directory, through the directory's descriptor.
    static func renameReplacing(from source: String, to destination: String) throws(HaulError) {
        let from = URL(fileURLWithPath: source)
        let to = URL(fileURLWithPath: destination)
        let parent = to.deletingLastPathComponent().path
        guard from.deletingLastPathComponent().path == parent else {
            throw HaulError(.fileSystem, "cannot move \(source) to \(destination): not in the same directory")
        }
        let directory = try openDirectory(parent)
        defer { close(directory) }
        try renameReplacing(in: directory, from: from.lastPathComponent, to: to.lastPathComponent, path: destination)
    }
}

private extension UInt64 {
    var hexPadded: String {
        let hex = String(self, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
