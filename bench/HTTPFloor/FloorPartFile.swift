import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// What every row of the floor that writes files does with a body, and nothing more: a part
/// file created exclusively, written as the bytes come, closed and renamed into place (none of
/// Haul's checks). One place for it, so that the rows differ only in how the bytes arrive.
struct FloorPartFile {
    let name: String
    private let descriptor: Int32

    /// The file a URL is saved as: its last path component.
    static func name(of url: String) -> String {
        String(url.split(separator: "/").last ?? "file")
    }

    private static func partName(of name: String) -> String { ".floor-" + name + ".part" }

    init(name: String) throws {
        self.name = name
        descriptor = open(Self.partName(of: name), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Writes the buffer's readable bytes; returns how many.
    func append(_ buffer: ByteBuffer) throws -> Int {
        let written = buffer.withUnsafeReadableBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == buffer.readableBytes else { throw CocoaError(.fileWriteUnknown) }
        return written
    }

    /// Closes the part file and renames it into place.
    func finish() throws {
        close(descriptor)
        guard rename(Self.partName(of: name), name) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Closes the part file after a failure, leaving it where it is.
    func abandon() {
        close(descriptor)
    }
}
