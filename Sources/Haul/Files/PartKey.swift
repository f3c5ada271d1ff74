import Crypto
import Foundation

/// The KEY in a download's `.haul-KEY.part` file: 16 hex digits derived from the URL and the
/// requested file name, so that the same request made again (by a new process) finds the same
/// part file; when another unfinished download already uses that key, the download's own ID
/// is appended (`KEY-ID`), so two downloads never share a part file.
///
/// Held as numbers rather than text: a queued download keeps one, and a string of 16 or more
/// characters would cost a heap allocation per download.
struct PartKey: Hashable, Sendable, CustomStringConvertible {
    let base: UInt64
    /// The download that had to take a key of its own.
    let owner: DownloadID?

    init(base: UInt64, owner: DownloadID? = nil) {
        self.base = base
        self.owner = owner
    }

    /// The first 8 bytes of SHA-256(URL + "\n" + requested name), big-endian. The bytes are
    /// hashed where they lie (one key per download of a batch).
    init(for request: DownloadRequest) {
        var hasher = SHA256()
        func update(_ text: String) {
            var text = text
            text.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        update(request.url.absoluteString)
        update("\n")
        if let name = request.fileName { update(name) }
        let base = hasher.finalize().withUnsafeBytes { digest in
            digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        self.init(base: base)
    }

    /// Reads a key as `description` writes it; nil for anything else.
    init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts[0].utf8.count == 16, let base = UInt64(parts[0], radix: 16) else { return nil }
        if parts.count == 2 {
            guard let owner = DownloadID(String(parts[1])) else { return nil }
            self.init(base: base, owner: owner)
        } else {
            self.init(base: base)
        }
    }

    /// The same key, owned by `id` alone.
    func owned(by id: DownloadID) -> PartKey { PartKey(base: base, owner: id) }

    /// 16 lowercase hex digits, then `-ID` when owned: written in place (asked for each time a
    /// download starts and each time its row is written).
    var description: String {
        let hex = String(unsafeUninitializedCapacity: 16) { buffer in
            var value = base
            for index in stride(from: 15, through: 0, by: -1) {
                let digit = UInt8(value & 0xF)
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                value >>= 4
            }
            return 16
        }
        return owner.map { hex + "-" + $0.description } ?? hex
    }
}
