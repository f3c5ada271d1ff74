import Foundation

/// Opening a part file as the download directory's own, by one writer at a time.
///
/// Anyone who can write into the directory can put something under the part file's
/// predictable name: a symbolic link to a file of the user's elsewhere, a file of their own, a
/// hard link. And a second run of the same command, in this or another process, computes the
/// same name. So the file is opened relative to the directory's descriptor with `O_NOFOLLOW`;
/// a link in its place is removed (as a name: its target is never opened), and so is a file
/// that is not this user's own regular file with one link; then it is locked (`flock`, held
/// until the file is placed or the transfer ends, released by the kernel if the process
/// dies). A file another writer holds is left alone and the download fails within a moment with
/// `.fileExists` and a message that says so: two writers never share a part file. A transfer of
/// this process never stands in the way of the next one of its download: it closes its part
/// file before it reports its end (`PartFile.close()`).
extension PartFile {
    /// Behind the `.fileExists` error of a part file whose lock another writer holds.
    struct HeldElsewhere: Error {}

    /// Whether `error` says another writer holds the part file's lock (nothing was written).
    static func isHeldElsewhere(_ error: HaulError) -> Bool {
        error.code == .fileExists && error.underlying is HeldElsewhere
    }

    /// How many times opening gives way to someone changing the entry meanwhile.
    private static let openAttempts = 8

    /// Opens and locks the part file (once; later calls keep the open one). `creating`: make
    /// it when missing. Returns false when it is missing and `creating` is false. With
    /// `verified`, the entry opened is the verified one (`verifiedName`), never created.
    mutating func acquire(creating: Bool, verified: Bool = false) throws(HaulError) -> Bool {
        try acquireTelling(creating: creating, verified: verified) != .missing
    }

    /// What `acquireTelling` found.
    enum Acquired: Equatable {
        /// Missing, and not to be created.
        case missing
        /// Open already, or opened as it was.
        case opened
        /// Made by this call: empty, written at 0.
        case created
    }

    /// `acquire`, saying whether the file was made by this call. `expectingNew`: the file is
    /// most likely missing (a first attempt), so making it is tried first; one that exists
    /// is opened as it is, as always (a system call per new part file fewer).
    mutating func acquireTelling(creating: Bool, verified: Bool = false, expectingNew: Bool = false) throws(HaulError) -> Acquired {
        if handle != nil { return .opened }
        let name = verified ? verifiedName : self.name
        let creating = creating && !verified
        var createFirst = creating && expectingNew
        let (directory, directoryStatus) = try openDirectory()
        var opened: OpenPartFile?
        defer { if opened == nil { SystemCalls.close(directory) } }
        if let known = directoryIdentity, known != directoryStatus.identity {
            throw HaulError(
                .directoryNotFound,
                "\(directoryPath) is no longer the directory this download started in (was it replaced, by a link perhaps?); nothing is written there")
        }
        for _ in 0..<(Self.openAttempts + (createFirst ? 1 : 0)) {
            let descriptor: Int32
            let created: Bool
            if createFirst {
                createFirst = false
                // Taken (by a file, a link, anything): opened as it is below, the usual way.
                guard case .opened(let fd) = try SystemCalls.openEntry(in: directory, name, create: true, path: path) else { continue }
                descriptor = fd
                created = true
            } else {
                switch try SystemCalls.openEntry(in: directory, name, create: false, path: path) {
                case .opened(let fd):
                    descriptor = fd
                    created = false
                case .link:
                    // Planted under the predictable name: the link goes, its target is never opened.
                    try SystemCalls.removeEntry(in: directory, name, path: path)
                    continue
                case .missing, .exists:
                    guard creating else { return .missing }
                    guard case .opened(let fd) = try SystemCalls.openEntry(in: directory, name, create: true, path: path) else { continue }
                    descriptor = fd
                    created = true
                }
            }
            let status: SystemCalls.EntryStatus
            do {
                status = try SystemCalls.status(descriptor, path: path)
            } catch {
                SystemCalls.close(descriptor)
                throw error
            }
            guard status.kind == .regular, status.links == 1, status.ownerID == SystemCalls.effectiveUserID else {
                SystemCalls.close(descriptor)
                try setAside(status, in: directory, entry: name)
                continue
            }
            let locked: Bool
            do {
                locked = try SystemCalls.tryLock(descriptor, path: path)
            } catch {
                SystemCalls.close(descriptor)
                throw error
            }
            guard locked else {
                SystemCalls.close(descriptor)
                throw HaulError(
                    .fileExists,
                    "\(path) is being written by another download of the same file (another haul process?); nothing was written to it. Wait for that one to finish, or stop it",
                    underlying: HeldElsewhere())
            }
            // Its last writer may have renamed it into place between the open and the lock.
            guard SystemCalls.status(in: directory, name)?.identity == status.identity else {
                SystemCalls.close(descriptor)
                continue
            }
            // A directory found without links is held for the next part file in it (`LinkFreeDirectories`).
            let holdsLinkFree = !followsDirectoryLinks && LinkFreeDirectories.shared.hold(directoryPath, identity: directoryStatus.identity)
            opened = OpenPartFile(
                descriptor: descriptor, directory: directory, identity: status.identity, linkFreePath: holdsLinkFree ? directoryPath : nil)
            handle = opened
            directoryIdentity = directoryStatus.identity
            // Made here and still empty (nobody else writes a file this process holds locked).
            return created && status.size == 0 ? .created : .opened
        }
        throw HaulError(.fileSystem, "cannot open \(path): something keeps replacing it")
    }

    /// Opens the part file again to continue bytes counted in it (by this transfer, or by the
    /// store's record after a restart). True only when they can still be there: the file
    /// exists, has at least `length` bytes, and, if this transfer closed it before, is that
    /// very file with nothing written to it since. Otherwise nothing stays open, and every
    /// counted byte must be fetched again.
    mutating func reopenToContinue(atLeast length: Int64) throws(HaulError) -> Bool {
        if handle != nil { return true }
        guard try acquire(creating: false), let handle else { return false }
        let path = path
        let now = try handle.withDescriptor(path: path) { descriptor throws(HaulError) in try SystemCalls.status(descriptor, path: path) }
        let untouched = lastSeen.map { $0.identity == now.identity && $0.changeTime == now.changeTime } ?? true
        guard untouched, now.size >= length else {
            handle.close()
            self.handle = nil
            return false
        }
        return true
    }

    /// The part file as it is on disk when it is this user's own regular file; nil otherwise.
    /// Nothing is created, opened for writing or followed.
    func existing() -> SystemCalls.EntryStatus? {
        guard let directory = try? (followsDirectoryLinks
            ? SystemCalls.openDirectory(directoryPath) : LinkFreeDirectories.shared.open(directoryPath).descriptor)
        else { return nil }
        defer { SystemCalls.close(directory) }
        guard let status = SystemCalls.status(in: directory, name), status.kind == .regular, status.links == 1,
              status.ownerID == SystemCalls.effectiveUserID
        else { return nil }
        return status
    }

    /// The download directory, opened as `followsDirectoryLinks` says, with its status.
    private func openDirectory() throws(HaulError) -> (descriptor: Int32, status: SystemCalls.EntryStatus) {
        guard followsDirectoryLinks else { return try LinkFreeDirectories.shared.open(directoryPath) }
        return try SystemCalls.withStatus(try SystemCalls.openDirectory(directoryPath), path: directoryPath)
    }

    /// Size on disk now, or nil when there is no usable part file.
    func existingSize() -> Int64? { existing()?.size }

    /// Deletes the part file (or its verified entry), by name in its directory: the open one
    /// if this copy holds it; otherwise only one no other process is writing (it takes the
    /// lock first).
    func discard() {
        if let handle {
            for entry in [name, verifiedName] where handle.isNamed(entry) {
                try? SystemCalls.removeEntry(in: handle.directory, entry, path: Placement.join(directoryPath, entry))
            }
            return
        }
        for verified in [false, true] {
            var unopened = self
            unopened.directoryIdentity = nil
            guard (try? unopened.acquire(creating: false, verified: verified)) == true, let handle = unopened.handle else { continue }
            let entry = verified ? verifiedName : name
            if handle.isNamed(entry) { try? SystemCalls.removeEntry(in: handle.directory, entry, path: Placement.join(directoryPath, entry)) }
        }
    }

    /// Renames the open, verified part file to `verifiedName` in its directory (it stays open
    /// and locked): from here a kill -9 loses nothing, as a new process places it.
    func markVerified() throws(HaulError) {
        guard let handle else { preconditionFailure("marking a closed part file") }
        guard handle.isNamed(name) else {
            throw HaulError(.fileSystem, "\(path) was replaced or removed before it could be placed; nothing was moved")
        }
        let verifiedName = self.verifiedName
        try SystemCalls.renameReplacing(in: handle.directory, from: name, to: verifiedName, path: verifiedPath)
        guard handle.isNamed(verifiedName) else {
            throw HaulError(.fileSystem, "\(verifiedPath) was replaced while it was being marked verified")
        }
    }

    /// Undoes `markVerified`: the file was not placed, and its download's next attempt
    /// continues (or revalidates) the part file. Does nothing unless the verified entry is
    /// this very file.
    func unmarkVerified() {
        guard let handle, handle.isNamed(verifiedName) else { return }
        try? SystemCalls.renameReplacing(in: handle.directory, from: verifiedName, to: name, path: path)
    }

    /// Removes what is under the part file's name but is not a part file of this user's (a
    /// directory is not touched); says so when it cannot.
    private func setAside(_ status: SystemCalls.EntryStatus, in directory: Int32, entry name: String) throws(HaulError) {
        let what = switch status.kind {
        case .regular where status.ownerID != SystemCalls.effectiveUserID: "a file of user \(status.ownerID)"
        case .regular: "a file with \(status.links) links"
        case .directory: "a directory"
        case .symlink: "a symbolic link"
        case .other: "not a regular file"
        }
        guard status.kind != .directory else {
            throw HaulError(.fileSystem, "\(path) is \(what), not a part file; remove it to download here")
        }
        do {
            try SystemCalls.removeEntry(in: directory, name, path: path)
        } catch {
            throw HaulError(error.code, "\(path) is \(what), not a part file of this user's, and cannot be removed: \(error.message)")
        }
    }
}
