import Foundation
import NIOCore

/// A `.part` file being filled, owned by exactly one transfer at a time.
///
/// It lives in the destination directory (never a system temp folder the OS may clean), named
/// `.haul-KEY.part`. Its resume state (validator, length, durable offset) is kept in the store.
struct PartFile: Sendable {
    let path: String
    private(set) var descriptor: Int32?

    init(directory: String, key: String) {
        self.path = Placement.join(directory, Self.prefix + key + Self.partSuffix)
    }

    /// Where a part file whose bytes were all verified waits for its placement:
    /// `.haul-KEY.done` beside it. Only `markVerified` makes one, after length and checksums
    /// matched, so a new process that finds it may put it in place without fetching anything
    /// (see `DownloadManager+Recovery`); a `.part` proves nothing about its bytes.
    var verifiedPath: String { String(path.dropLast(Self.partSuffix.count)) + Self.verifiedSuffix }

    private static let partSuffix = ".part"
    private static let verifiedSuffix = ".done"

    /// The keys of the verified part files (`.haul-KEY.done`) in `directory`.
    static func verifiedKeys(inDirectory directory: String) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var keys: Set<String> = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(verifiedSuffix) {
            keys.insert(String(name.dropFirst(prefix.count).dropLast(verifiedSuffix.count)))
        }
        return keys
    }

    private static let prefix = ".haul-"

    /// Renames the closed, verified part file to `verifiedPath` (replacing a stale one).
    func markVerified() throws(HaulError) {
        precondition(descriptor == nil, "a verified part file is closed first")
        try SystemCalls.renameReplacing(from: path, to: verifiedPath)
    }

    /// Undoes `markVerified`: the file was not placed, and its download's next attempt
    /// continues (or revalidates) the part file. Does nothing if there is no verified file.
    func unmarkVerified() {
        try? SystemCalls.renameReplacing(from: verifiedPath, to: path)
    }

    var isOpen: Bool { descriptor != nil }

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
        if descriptor == nil {
            descriptor = try SystemCalls.openReadWrite(path)
        }
        try SystemCalls.truncate(descriptor!, to: length, path: path)
        if offset != length { try SystemCalls.seek(descriptor!, to: offset, path: path) }
    }

    /// Opens (creating) the part file without cutting it: a segmented download continues
    /// segments anywhere in it, each from its own offset.
    mutating func openKeepingContents() throws(HaulError) {
        if descriptor == nil {
            descriptor = try SystemCalls.openReadWrite(path)
        }
    }

    mutating func close() {
        if let descriptor { SystemCalls.close(descriptor) }
        descriptor = nil
    }

    /// Size on disk now, or nil when the file does not exist.
    func existingSize() -> Int64? {
        guard SystemCalls.fileExists(path) else { return nil }
        guard let fd = try? SystemCalls.openReadWrite(path) else { return nil }
        defer { SystemCalls.close(fd) }
        return try? SystemCalls.size(fd, path: path)
    }

    func write(_ buffer: ByteBuffer) throws(HaulError) {
        guard let descriptor else { preconditionFailure("write to a closed part file") }
        do {
            try buffer.withUnsafeReadableBytes { bytes in
                try SystemCalls.writeAll(descriptor, bytes, path: path)
            }
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot write \(path): \(error)")
        }
    }

    /// Writes the first `count` readable bytes of `buffer` at `offset`, leaving the file
    /// position alone, so that several connections can fill one file at once.
    func write(_ buffer: ByteBuffer, count: Int, at offset: Int64) throws(HaulError) {
        guard let descriptor else { preconditionFailure("write to a closed part file") }
        precondition(count <= buffer.readableBytes, "writing more bytes than the buffer holds")
        do {
            try buffer.withUnsafeReadableBytes { bytes in
                try SystemCalls.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: offset, path: path)
            }
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot write \(path): \(error)")
        }
    }

    func sync() throws(HaulError) {
        guard let descriptor else { return }
        try SystemCalls.sync(descriptor, path: path)
    }

    /// Feeds the first `length` bytes to `hasher`: after a resume in a new process, the
    /// streaming checksums are rebuilt by reading the kept prefix once.
    func hashPrefix(_ length: Int64, into hasher: inout StreamingHasher) throws(HaulError) {
        try hash(from: 0, to: length, into: &hasher)
    }

    /// Feeds bytes `start..<end` to `hasher`: a segmented download hashes what its
    /// connections wrote out of order once, at the end, after the prefix hashed in flight.
    func hash(from start: Int64, to end: Int64, into hasher: inout StreamingHasher) throws(HaulError) {
        guard let descriptor, end > start else { return }
        let length = end
        let chunkSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = start
        while offset < length {
            let wanted = Int(min(Int64(chunkSize), length - offset))
            let count = try SystemCalls.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: offset, path: path)
            guard count > 0 else { throw HaulError(.fileSystem, "\(path) is shorter than its recorded \(length) bytes") }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    /// Device, inode, size and modification time of the open part file: the first two survive
    /// the rename into place (recovery finds the file by them), the last two are what it will
    /// show there.
    func describe() throws(HaulError) -> (identity: SystemCalls.FileIdentity, size: Int64, modified: Double) {
        guard let descriptor else { preconditionFailure("describe a closed part file") }
        return try SystemCalls.describe(descriptor, path: path)
    }

    /// Deletes the part file, and a verified one waiting for its placement.
    func discard() {
        try? SystemCalls.removeFile(path)
        try? SystemCalls.removeFile(verifiedPath)
    }
}
