import Crypto
import NIOCore

/// Computes the requested digests while bytes stream to disk, so the file is never read twice.
struct StreamingHasher: Sendable {
    private var md5: Insecure.MD5?
    private var sha1: Insecure.SHA1?
    private var sha256: SHA256?
    private var sha512: SHA512?

    init(algorithms: Set<Checksum.Algorithm>) {
        if algorithms.contains(.md5) { md5 = Insecure.MD5() }
        if algorithms.contains(.sha1) { sha1 = Insecure.SHA1() }
        if algorithms.contains(.sha256) { sha256 = SHA256() }
        if algorithms.contains(.sha512) { sha512 = SHA512() }
    }

    var isEmpty: Bool { md5 == nil && sha1 == nil && sha256 == nil && sha512 == nil }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        md5?.update(bufferPointer: bytes)
        sha1?.update(bufferPointer: bytes)
        sha256?.update(bufferPointer: bytes)
        sha512?.update(bufferPointer: bytes)
    }

    mutating func update(_ buffer: ByteBuffer) {
        guard !isEmpty else { return }
        buffer.withUnsafeReadableBytes { update($0) }
    }

    /// The digests of everything fed so far, one per algorithm.
    func finalize() -> [Checksum] {
        var result: [Checksum] = []
        func add(_ algorithm: Checksum.Algorithm, _ digest: some Digest) {
            let hex = digest.map { byte in
                let text = String(byte, radix: 16)
                return byte < 16 ? "0" + text : text
            }.joined()
            if let checksum = try? Checksum(algorithm, hex: hex) { result.append(checksum) }
        }
        if let md5 { add(.md5, md5.finalize()) }
        if let sha1 { add(.sha1, sha1.finalize()) }
        if let sha256 { add(.sha256, sha256.finalize()) }
        if let sha512 { add(.sha512, sha512.finalize()) }
        return result
    }
}
