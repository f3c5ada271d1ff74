import NIOCore

/// A real gzip stream (RFC 1952) of the test content, produced on the fly.
///
/// `gzip=1` exists so that clients learn to treat `Content-Encoding: gzip` as "not resumable,
/// length is the encoded length" (design rule 6). The stream only has to be valid, not small, so
/// it uses stored (uncompressed) deflate blocks: no zlib, exact length known up front (so the
/// server can declare Content-Length), and the CRC is computed while streaming.
struct GzipStream {
    /// The largest payload of one stored deflate block.
    static let maxBlock = 65_535
    /// Fixed gzip header: magic, CM=deflate, no flags, no mtime, no extra flags, OS unknown.
    static let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]

    /// Bytes of the whole gzip stream for `size` content bytes.
    static func encodedLength(contentSize size: Int) -> Int {
        let blocks = max(1, (size + Self.maxBlock - 1) / Self.maxBlock)
        return Self.header.count + blocks * 5 + size + 8
    }

    private let seed: UInt64
    private let size: Int
    /// Small framing bytes (header, block header, trailer) waiting to be emitted.
    private var pending: [UInt8]
    private var pendingIndex = 0
    /// Content bytes still owed to the current stored block.
    private var blockRemaining = 0
    private var contentOffset = 0
    private var blocksStarted = 0
    private var trailerQueued = false
    private var crc = CRC32()

    init(seed: UInt64, size: Int) {
        self.seed = seed
        self.size = size
        self.pending = Self.header
    }

    /// Appends up to `count` stream bytes to `buffer`; returns how many (0 at the end).
    mutating func read(into buffer: inout ByteBuffer, count: Int) -> Int {
        var written = 0
        while written < count {
            if self.pendingIndex < self.pending.count {
                let take = min(count - written, self.pending.count - self.pendingIndex)
                buffer.writeBytes(self.pending[self.pendingIndex..<self.pendingIndex + take])
                self.pendingIndex += take
                written += take
            } else if self.blockRemaining > 0 {
                let take = min(count - written, self.blockRemaining)
                let offset = self.contentOffset
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: take) { storage in
                    let region = UnsafeMutableRawBufferPointer(rebasing: storage[0..<take])
                    TestContent.fill(region, seed: self.seed, offset: offset)
                    self.crc.update(UnsafeRawBufferPointer(region))
                    return take
                }
                self.contentOffset += take
                self.blockRemaining -= take
                written += take
            } else if self.contentOffset < self.size || self.blocksStarted == 0 {
                self.startBlock()
            } else if !self.trailerQueued {
                self.queueTrailer()
            } else {
                break
            }
        }
        return written
    }

    /// Queues a stored block header: BFINAL/BTYPE=00 byte, then LEN and NLEN (little-endian).
    private mutating func startBlock() {
        let length = min(Self.maxBlock, self.size - self.contentOffset)
        let isFinal = self.contentOffset + length == self.size
        let len = UInt16(length)
        self.pending = [
            isFinal ? 0x01 : 0x00,
            UInt8(len & 0xFF), UInt8(len >> 8),
            UInt8(~len & 0xFF), UInt8(~len >> 8),
        ]
        self.pendingIndex = 0
        self.blockRemaining = length
        self.blocksStarted += 1
    }

    /// Queues CRC32 and ISIZE (content length mod 2^32), both little-endian.
    private mutating func queueTrailer() {
        let crc = self.crc.value
        let isize = UInt32(truncatingIfNeeded: self.size)
        self.pending = (0..<4).map { UInt8(truncatingIfNeeded: crc >> ($0 * 8)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: isize >> ($0 * 8)) }
        self.pendingIndex = 0
        self.trailerQueued = true
    }
}
