import NIOConcurrencyHelpers

/// A part file's open file and directory, and with the file its lock (`PartFile+Opening`).
///
/// Closed by the transfer that opened it when that transfer ends (`close()`), not whenever the
/// last reference happens to go: a finished task, a thread-pool job or a callback of the
/// stopped transfer may keep a copy of its `PartFile` a few milliseconds longer, and the next
/// transfer of the same download, started at once, would find the lock taken. A file handed
/// on instead (the verified file waiting for its placement) is never closed by the transfer:
/// it closes when the last copy lets go.
///
/// Every use of the descriptor goes through `withDescriptor`, so that a copy that outlives the
/// close can never write through a number the system has given to another file meanwhile; a
/// close asked while a use is under way (a connection's write, a flush) is done when it ends.
final class OpenPartFile: Sendable {
    private struct Uses {
        var inFlight = 0
        var closeAsked = false
        var closed = false
    }

    private let descriptor: Int32
    /// The download directory, opened once: every name is looked up in it, not by path. Used
    /// only by the file's owner, in turn with its other work, never after it closed the file.
    let directory: Int32
    /// The file's device and inode, as opened.
    let identity: SystemCalls.FileIdentity
    /// The directory's path when it was found without links and is held for other part files
    /// in it (`LinkFreeDirectories.hold`): released just before the directory is closed.
    private let linkFreePath: String?
    private let uses = NIOLockedValueBox(Uses())

    init(descriptor: Int32, directory: Int32, identity: SystemCalls.FileIdentity, linkFreePath: String? = nil) {
        self.descriptor = descriptor
        self.directory = directory
        self.identity = identity
        self.linkFreePath = linkFreePath
    }

    deinit {
        // No use can be under way: whoever used it held a reference.
        if !uses.withLockedValue({ $0.closed }) { closeDescriptors() }
    }

    /// Whether the file is closed, or will be when the use under way ends.
    var isClosed: Bool { uses.withLockedValue { $0.closeAsked } }

    /// Runs `body` with the file's descriptor; throws, without running it, once the file was
    /// closed (a copy that outlived its transfer).
    func withDescriptor<T>(path: String, _ body: (Int32) throws(HaulError) -> T) throws(HaulError) -> T {
        let open = uses.withLockedValue { uses -> Bool in
            guard !uses.closeAsked else { return false }
            uses.inFlight += 1
            return true
        }
        guard open else { throw HaulError(.fileSystem, "\(path) was closed: the transfer that wrote it has ended") }
        defer {
            let closeNow = uses.withLockedValue { uses -> Bool in
                uses.inFlight -= 1
                return Self.takeClose(&uses)
            }
            if closeNow { closeDescriptors() }
        }
        return try body(descriptor)
    }

    /// Closes the file and the directory, releasing the lock, for every copy: now, or when the
    /// use under way ends. Returns whether they are closed on return.
    @discardableResult
    func close() -> Bool {
        let closeNow = uses.withLockedValue { uses -> Bool in
            uses.closeAsked = true
            return Self.takeClose(&uses)
        }
        if closeNow { closeDescriptors() }
        return uses.withLockedValue { $0.closed }
    }

    /// Whether `name` in the directory is still this file (not replaced, not renamed away).
    func isNamed(_ name: String) -> Bool {
        guard !isClosed else { return false }
        return SystemCalls.status(in: directory, name)?.identity == identity
    }

    /// Whether the descriptors are to be closed now (once).
    private static func takeClose(_ uses: inout Uses) -> Bool {
        guard uses.closeAsked, uses.inFlight == 0, !uses.closed else { return false }
        uses.closed = true
        return true
    }

    private func closeDescriptors() {
        SystemCalls.close(descriptor)
        // Released while the directory is still open: its identity cannot be another's yet.
        if let linkFreePath { LinkFreeDirectories.shared.release(linkFreePath) }
        SystemCalls.close(directory)
    }
}
