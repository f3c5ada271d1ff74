import Foundation
import Logging

/// The daemon's unix socket: its path, the directory that holds it, and the socket file's life
/// from a stale leftover to the bound socket (mode 0600) to its removal at shutdown.
///
/// Who may connect is decided by file modes: the socket is 0600 and, by default, lives in a
/// 0700 directory owned by the daemon's user, so other users cannot even reach it.
struct SocketLocation: Sendable {
    /// Unix socket addresses hold at most 108 bytes on Linux (104 on macOS), the final NUL included.
    static let maximumPathBytes = 103

    let path: String
    let directory: String

    /// The lock file beside the socket.
    var lockPath: String { path + ".lock" }

    init(path: String) {
        self.path = path
        self.directory = (path as NSString).deletingLastPathComponent
    }

    /// Makes sure the socket can be created safely.
    ///
    /// The default runtime directory (`$XDG_RUNTIME_DIR/haul` or `/tmp/haul-UID`) is created
    /// with mode 0700 and must be a real directory (not a symlink) owned by this user; a wider
    /// mode is narrowed to 0700. A directory given through `--socket` that does not exist is
    /// created 0700; one that exists is the user's choice and left as it is.
    func prepare(isDefaultRuntimeDirectory: Bool) throws(DaemonError) {
        guard path.utf8.count <= Self.maximumPathBytes else {
            throw DaemonError(.cannotListen, "the socket path \(path) is too long (\(path.utf8.count) bytes; unix sockets allow \(Self.maximumPathBytes))")
        }
        guard path.hasPrefix("/") else {
            throw DaemonError(.cannotListen, "the socket path \(path) must be absolute")
        }
        if isDefaultRuntimeDirectory {
            try DaemonSystemCalls.makeDirectory(directory, mode: 0o700)
            try checkPrivateDirectory()
        } else if try DaemonSystemCalls.status(of: directory) == nil {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DaemonError(.cannotListen, "cannot create the socket's directory \(directory): \(error.localizedDescription)")
            }
        }
    }

    /// The runtime directory must be ours alone: a directory another user created (or a
    /// symlink planted) at a predictable /tmp path would let them see or replace the socket.
    private func checkPrivateDirectory() throws(DaemonError) {
        guard let status = try DaemonSystemCalls.status(of: directory) else {
            throw DaemonError(.cannotListen, "the socket's directory \(directory) vanished while it was being created")
        }
        guard status.type == .directory else {
            throw DaemonError(.cannotListen, "\(directory) is not a directory (a symlink or a file is there); remove it or pass --socket")
        }
        guard status.ownerID == DaemonSystemCalls.userID else {
            throw DaemonError(.cannotListen, "\(directory) belongs to user \(status.ownerID), not to this user (\(DaemonSystemCalls.userID)); remove it or pass --socket")
        }
        if status.permissions != 0o700 {
            try DaemonSystemCalls.setPermissions(directory, 0o700, kind: .cannotListen)
        }
    }

    /// Removes a socket file left by a daemon that did not stop cleanly (`kill -9`, a crash).
    /// Call only while holding the socket's lock: then no live daemon is listening there.
    func removeStaleSocket(logger: Logger) throws(DaemonError) {
        guard let status = try DaemonSystemCalls.status(of: path) else { return }
        guard status.type == .socket else {
            throw DaemonError(.cannotListen, "\(path) exists and is not a socket; remove it or choose another --socket")
        }
        try DaemonSystemCalls.removeFile(path)
        logger.notice("removed a stale socket left by a daemon that did not stop cleanly", metadata: ["socket": "\(path)"])
    }

    /// Narrows the freshly bound socket to mode 0600 and returns its identity, so that only
    /// this socket (not one that replaced it) is removed at shutdown.
    func restrictBoundSocket() throws(DaemonError) -> DaemonSystemCalls.PathStatus {
        try DaemonSystemCalls.setPermissions(path, 0o600, kind: .cannotListen)
        guard let status = try DaemonSystemCalls.status(of: path), status.type == .socket else {
            throw DaemonError(.cannotListen, "the socket \(path) vanished right after it was created")
        }
        return status
    }

    /// Removes the socket at shutdown if it is still the one this daemon bound.
    func removeSocket(boundAs identity: DaemonSystemCalls.PathStatus?, logger: Logger) {
        guard let identity, let current = try? DaemonSystemCalls.status(of: path),
              current.type == .socket, current.device == identity.device, current.inode == identity.inode
        else { return }
        do {
            try DaemonSystemCalls.removeFile(path)
        } catch {
            logger.warning("cannot remove the socket", metadata: ["socket": "\(path)", "error": "\(error)"])
        }
    }
}
