import Foundation
import Haul

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the daemon keeps its RPC secret when none is configured: a file in the state
/// directory, readable by its owner only, created with a random secret the first time.
///
/// The file is written under a temporary name with mode 0600 from the start (never readable by
/// others, not even for a moment) and linked into place, which fails if another process made
/// one first: then that one is used. A secret file that other users can read, or that another
/// user owns, is refused rather than trusted.
package enum RPCSecretFile {
    package static let defaultFileName = "rpc-secret"

    /// The secret in `directory/fileName`; if there is none, a new random one is stored there
    /// (`created` is then true). The directory is created (mode 0700) if needed.
    package static func loadOrCreate(
        in directory: URL, fileName: String = defaultFileName
    ) throws(HaulError) -> (value: String, created: Bool) {
        let path = directory.appendingPathComponent(fileName).path
        if let existing = try readSecret(at: path) { return (existing, false) }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw HaulError(.fileSystem, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        let value = RPCSecret.randomValue()
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try writeNew(temporary, contents: value + "\n")
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST, let existing = try readSecret(at: path) { return (existing, false) }
            throw failure(code, "cannot create \(path)")
        }
        return (value, true)
    }

    /// The secret in `directory/fileName`, or nil when there is no such file (a client reads
    /// the daemon's secret this way). The same checks as `loadOrCreate` apply.
    package static func load(in directory: URL, fileName: String = defaultFileName) throws(HaulError) -> String? {
        try readSecret(at: directory.appendingPathComponent(fileName).path)
    }

    /// The trimmed contents of the secret file, or nil when there is none.
    static func readSecret(at path: String) throws(HaulError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw failure(code, "cannot read the RPC secret file \(path)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(errno, "cannot inspect \(path)") }
        guard info.st_uid == geteuid() else {
            throw HaulError(.permissionDenied, "the RPC secret file \(path) belongs to another user; remove it or make it yours")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw HaulError(
                .permissionDenied,
                "the RPC secret file \(path) can be read by other users (mode \(String(mode, radix: 8))); make it private with: chmod 600 \(path)")
        }
        // A secret is short; 4 KiB is more than any sensible one and bounds what is read.
        var bytes = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw failure(errno, "cannot read \(path)") }
            if got == 0 { break }
            count += got
        }
        let value = String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else {
            throw HaulError(.invalidRequest, "the RPC secret file \(path) is empty; write a secret into it, or delete it to have one generated")
        }
        return value
    }

    private static func writeNew(_ path: String, contents: String) throws(HaulError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(errno, "cannot create \(path)") }
        defer { close(fd) }
        var remaining = Array(contents.utf8)[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                unlink(path)
                throw failure(code, "cannot write \(path)")
            }
            remaining = remaining.dropFirst(written)
        }
        guard fsync(fd) == 0 else {
            let code = errno
            unlink(path)
            throw failure(code, "cannot write \(path)")
        }
    }

    private static func failure(_ code: Int32, _ context: String) -> HaulError {
        let reason = String(cString: strerror(code))
        return HaulError(code == EACCES || code == EPERM ? .permissionDenied : .fileSystem, "\(context): \(reason)")
    }
}
