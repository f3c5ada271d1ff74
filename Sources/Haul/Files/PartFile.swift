import Foundation
import NIOCore

/// A `.part` file being filled, owned by exactly one transfer at a time.
///
/// It lives in the destination directory (never a system temp folder the OS may clean), named
/// `.haul-KEY.part`. Its resume state (validator, length, durable offset) is kept in the store.
///
/// The name is predictable, and the directory may be shared with people who are not friendly:
/// the file is opened only as the directory's own entry, never through a link, held under an
/// exclusive lock by the one process writing it, and placed by renaming that very entry
/// (`PartFile+Opening.swift`).
struct PartFile: Sendable {
    let path: String
    /// The download directory, as the request names it.
    let directoryPath: String
    /// The entry's name in it: `.haul-KEY.part`.
    let name: String
    /// The open, locked file and its directory while a transfer uses it; copies share it. The
    /// transfer closes it for all of them when it ends (`close()`), or hands it on
    /// (`handOver()`): then the last copy to let go closes it.
    var handle: OpenPartFile?
    /// The directory the part was first opened in: if the path leads elsewhere later (the
    /// directory was replaced, by a link to another place perhaps), nothing is written there.
    var directoryIdentity: SystemCalls.FileIdentity?
    /// Whether links in the directory's path are followed (a user's own directory may be
    /// reached through one); false for directories resolved when their download was added
    /// (`DownloadManager.Configuration.refusesLinksInDirectories`).
    var followsDirectoryLinks = true
    /// The file as this transfer last closed it: its bytes may be continued only if it is
    /// still that file, untouched since (`reopenToContinue(atLeast:)`).
    var lastSeen: SystemCalls.EntryStatus?

    init(directory: String, key: String) {
        self.directoryPath = directory
        self.name = Self.prefix + key + Self.partSuffix
        self.path = Placement.join(directory, name)
    }

    /// The name a part file whose bytes were all verified has while it waits for its
    /// placement: `.haul-KEY.done`. Only `markVerified` gives it, after length and checksums
    /// matched, so a new process that finds one may put it in place without fetching anything
    /// (`DownloadManager+InterruptedPlacement`); a `.part` proves nothing about its bytes.
    var verifiedName: String {
        var verified = name
        verified.removeLast(Self.partSuffix.count)
        verified += Self.verifiedSuffix
        return verified
    }
    /// `verifiedName` in the directory.
    var verifiedPath: String { Placement.join(directoryPath, verifiedName) }

    private static let prefix = ".haul-"
    private static let partSuffix = ".part"
    private static let verifiedSuffix = ".done"

    /// The keys of the verified part files (`.haul-KEY.done`) in `directory`: one listing for
    /// a whole directory, instead of a look-up per download.
    static func verifiedKeys(inDirectory directory: String) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var keys: Set<String> = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(verifiedSuffix) {
            keys.insert(String(name.dropFirst(prefix.count).dropLast(verifiedSuffix.count)))
        }
        return keys
    }

    var isOpen: Bool { handle != nil }

    /// Runs `body` with the open file's descriptor (`OpenPartFile.withDescriptor`).
    private func withDescriptor<T>(_ body: (Int32) throws(HaulError) -> T) throws(HaulError) -> T {
        guard let handle else { preconditionFailure("using a part file that is not open") }
        return try handle.withDescriptor(path: path, body)
    }

    /// Opens (creating) the part file and cuts it to `length` bytes.
    mutating func open(truncatingTo length: Int64) throws(HaulError) {
        try open(truncatingTo: length, writingAt: length)
    }

    /// Opens (creating) the part file, cuts it to `length` bytes, and puts the next write at
    /// `offset` (at most `length`): the bytes from `offset` to `length` stay in the file until
    /// they are written over. What revalidating a whole part needs: its last byte is fetched
    /// again, but cutting the part short first would leave it shorter than the durable offset
    /// the store records, and a crash before the byte came back would cost the whole file.
    mutating func open(truncatingTo length: Int64, writingAt offset: Int64) throws(HaulError) {
        precondition(offset <= length, "the write position is past the end of the part")
        // A part file just made is empty and written at 0: nothing to cut or move.
        if try acquireTelling(creating: true, expectingNew: length == 0) == .created, length == 0 { return }
        try withDescriptor { descriptor throws(HaulError) in
            try SystemCalls.truncate(descriptor, to: length, path: path)
            if offset != length { try SystemCalls.seek(descriptor, to: offset, path: path) }
        }
    }

    /// Opens (creating) the part file without cutting it: a segmented download continues
    /// segments anywhere in it, each from its own offset.
    mutating func openKeepingContents() throws(HaulError) {
        _ = try acquire(creating: true)
    }

    /// Closes the file, for every copy of this `PartFile` that shares it, and so releases its
    /// lock, noting how it was left. What a transfer does before it reports its end: the next
    /// transfer of the same download, which the manager may start at once, finds it free.
    mutating func close() {
        guard let handle else { return }
        lastSeen = try? handle.withDescriptor(path: path) { descriptor throws(HaulError) in try SystemCalls.status(descriptor, path: path) }
        handle.close()
        self.handle = nil
    }

    /// Lets go of the file without closing it, noting how it was left: a copy made before
    /// (the verified file handed to placement) keeps it open and locked, and the last copy to
    /// let go closes it.
    mutating func handOver() {
        guard let handle else { return }
        lastSeen = try? handle.withDescriptor(path: path) { descriptor throws(HaulError) in try SystemCalls.status(descriptor, path: path) }
        self.handle = nil
    }

    /// `describe()` then `handOver()`, with one `fstat`: what a verified file records (its
    /// identity, size and modification time, which a rename changes none of) and how its
    /// transfer left it. Call it after any rename of the entry (which moves the change time).
    mutating func describeAndHandOver() throws(HaulError) -> (identity: SystemCalls.FileIdentity, size: Int64, modified: Double) {
        guard let handle else { preconditionFailure("describing a part file that is not open") }
        let path = path
        let seen = try handle.withDescriptor(path: path) { descriptor throws(HaulError) in
            try SystemCalls.statusAndModified(descriptor, path: path)
        }
        lastSeen = seen.status
        self.handle = nil
        return (seen.status.identity, seen.status.size, seen.modified)
    }

    func write(_ buffer: ByteBuffer) throws(HaulError) {
        try withDescriptor { descriptor throws(HaulError) in
            try Self.writing(path) {
                try buffer.withUnsafeReadableBytes { bytes in
                    try SystemCalls.writeAll(descriptor, bytes, path: path)
                }
            }
        }
    }

    /// Writes the first `count` readable bytes of `buffer` at `offset`, leaving the file
    /// position alone, so that several connections can fill one file at once.
    func write(_ buffer: ByteBuffer, count: Int, at offset: Int64) throws(HaulError) {
        precondition(count <= buffer.readableBytes, "writing more bytes than the buffer holds")
        try withDescriptor { descriptor throws(HaulError) in
            try Self.writing(path) {
                try buffer.withUnsafeReadableBytes { bytes in
                    try SystemCalls.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: offset, path: path)
                }
            }
        }
    }

    /// Runs a write whose closure may throw untyped (`ByteBuffer.withUnsafeReadableBytes`
    /// rethrows): a `HaulError` goes through, anything else becomes one.
    private static func writing(_ path: String, _ body: () throws -> Void) throws(HaulError) {
        do {
            try body()
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot write \(path): \(error)")
        }
    }

    func sync() throws(HaulError) {
        guard handle != nil else { return }
        try withDescriptor { descriptor throws(HaulError) in try SystemCalls.sync(descriptor, path: path) }
    }

    /// Feeds the first `length` bytes to `hasher`: after a resume in a new process, the
    /// streaming checksums are rebuilt by reading the kept prefix once.
    func hashPrefix(_ length: Int64, into hasher: inout StreamingHasher) throws(HaulError) {
        try hash(from: 0, to: length, into: &hasher)
    }

    /// Feeds bytes `start..<end` to `hasher`: a segmented download hashes what its
    /// connections wrote out of order once, at the end, after the prefix hashed in flight.
    func hash(from start: Int64, to end: Int64, into hasher: inout StreamingHasher) throws(HaulError) {
        guard handle != nil, end > start else { return }
        let length = end
        let chunkSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = start
        while offset < length {
            let wanted = Int(min(Int64(chunkSize), length - offset))
            let count = try withDescriptor { descriptor throws(HaulError) in
                try SystemCalls.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: offset, path: path)
            }
            guard count > 0 else { throw HaulError(.fileSystem, "\(path) is shorter than its recorded \(length) bytes") }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    /// Device, inode, size and modification time of the open part file: the first two survive
    /// the rename into place (recovery finds the file by them), the last two are what it will
    /// show there.
    func describe() throws(HaulError) -> (identity: SystemCalls.FileIdentity, size: Int64, modified: Double) {
        try withDescriptor { descriptor throws(HaulError) in try SystemCalls.describe(descriptor, path: path) }
    }
}
