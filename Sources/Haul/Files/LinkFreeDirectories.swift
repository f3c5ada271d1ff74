import NIOConcurrencyHelpers

/// The download directories that part files of this process hold open, found without
/// following a link (`PartFile.followsDirectoryLinks` false), so that the next part file in
/// the same directory opens it in one system call instead of two per component of its path.
///
/// Why: `haul daemon` refuses links in a download's directory (it resolved the directory when
/// the download was added, so a link found later was put there since). Opening the directory
/// one component at a time from `/` cost every part file an `open` and a `close` per
/// component: 20,000 more system calls than `haul get` for 5,000 small files into
/// `/dev/shm/…/out`, about 7% of the daemon's CPU for the batch, more for deeper directories.
///
/// Why a directory opened by its path, following links, may stand for one found by the walk:
/// while a part file is open its directory is too (`OpenPartFile.directory`), and while that
/// descriptor is open no other directory can have the same device and inode. A directory
/// opened while such a holder exists, whose identity is the holder's, is therefore the very
/// directory the walk found: whatever the path went through, the bytes go where the walk led.
/// Anything else (no holder, or another identity: a link to elsewhere put in the path) is
/// opened by the walk, which refuses the link as before. A holder is released before its
/// descriptor is closed (`OpenPartFile.closeDescriptors`), never after.
final class LinkFreeDirectories: Sendable {
    /// Shared by every manager of the process: the kernel's rule is per process too.
    static let shared = LinkFreeDirectories()

    private struct Holding {
        var identity: SystemCalls.FileIdentity
        var holders: Int
    }

    private let held = NIOLockedValueBox([String: Holding]())

    /// Opens the directory at the absolute `path` with no link in it that leads elsewhere than
    /// the walk would: in one `open` when a part file holds that very directory open,
    /// component by component otherwise (`SystemCalls.openDirectoryWithoutLinks`). Returns
    /// the descriptor (the caller's to close) and the directory's status.
    func open(_ path: String) throws(HaulError) -> (descriptor: Int32, status: SystemCalls.EntryStatus) {
        if let identity = held.withLockedValue({ $0[path]?.identity }), let fd = try? SystemCalls.openDirectory(path) {
            // Compared after the open: the holder, still registered now, still holds its
            // descriptor, so an equal identity is the same directory.
            if let status = try? SystemCalls.status(fd, path: path),
               status.identity == identity, held.withLockedValue({ $0[path]?.identity == identity }) {
                return (fd, status)
            }
            SystemCalls.close(fd)
        }
        return try SystemCalls.withStatus(try SystemCalls.openDirectoryWithoutLinks(path), path: path)
    }

    /// A part file holds the directory at `path`, opened by `open`, from now until `release`.
    /// False (nothing to release) when another directory with the same path is held already
    /// (the first was replaced while a part file in it is open): that one stays the reference.
    func hold(_ path: String, identity: SystemCalls.FileIdentity) -> Bool {
        held.withLockedValue { held in
            guard let holding = held[path] else {
                held[path] = Holding(identity: identity, holders: 1)
                return true
            }
            guard holding.identity == identity else { return false }
            held[path]?.holders += 1
            return true
        }
    }

    /// A part file that held the directory at `path` is about to close it.
    func release(_ path: String) {
        held.withLockedValue { held in
            guard let holding = held[path] else { return }
            if holding.holders > 1 {
                held[path]?.holders -= 1
            } else {
                held[path] = nil
            }
        }
    }

    /// How many part files hold the directory at `path` (tests).
    func holders(of path: String) -> Int {
        held.withLockedValue { $0[path]?.holders ?? 0 }
    }
}
