/// The deterministic bytes that `/file` serves.
///
/// Tests must be able to say what a correct download looks like without keeping a copy of it,
/// and a resume bug that splices bytes from the wrong offset must never go unnoticed. So byte `i`
/// of the content for `seed` is a hash of `(seed, i / 8)`: it depends only on the seed and the
/// offset, it is not periodic (shifting by any whole number of chunks changes the bytes), and it
/// costs one 64-bit mix per 8 bytes, which keeps a 1 GiB body well above loopback speed.
///
/// The server serves `seed &+ version`, so a content change (a version bump) is a new seed.
public enum TestContent {
    /// The first `size` bytes of the content for `seed`.
    public static func bytes(seed: UInt64, size: Int) -> [UInt8] {
        self.bytes(seed: seed, range: 0..<size)
    }

    /// The bytes at `range` of the content for `seed`, e.g. to check what a `206` carried.
    public static func bytes(seed: UInt64, range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0, "content offsets start at 0")
        return [UInt8](unsafeUninitializedCapacity: range.count) { buffer, initialized in
            self.fill(UnsafeMutableRawBufferPointer(buffer), seed: seed, offset: range.lowerBound)
            initialized = range.count
        }
    }

    /// The byte at `offset` of the content for `seed`.
    public static func byte(at offset: Int, seed: UInt64) -> UInt8 {
        precondition(offset >= 0, "content offsets start at 0")
        let word = self.word(UInt64(offset) >> 3, key: self.key(seed))
        return UInt8(truncatingIfNeeded: word >> ((UInt64(offset) & 7) << 3))
    }

    /// Overwrites `buffer` with the content for `seed` starting at content offset `offset`.
    ///
    /// This is the fast path the server streams from: it writes whole 64-bit words where it can.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer, seed: UInt64, offset: Int) {
        precondition(offset >= 0, "content offsets start at 0")
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let key = self.key(seed)
        let count = buffer.count
        var position = 0
        var contentOffset = UInt64(offset)

        // Leading bytes up to the next 8-byte content boundary.
        let lead = Int((8 - (contentOffset & 7)) & 7)
        if lead > 0 {
            let word = self.word(contentOffset >> 3, key: key)
            var shift = (contentOffset & 7) << 3
            while position < min(lead, count) {
                base.storeBytes(of: UInt8(truncatingIfNeeded: word >> shift), toByteOffset: position, as: UInt8.self)
                shift += 8
                position += 1
            }
            contentOffset += UInt64(position)
        }

        // Whole words, stored little-endian so the layout is the same on every platform.
        var wordIndex = contentOffset >> 3
        while count - position >= 8 {
            base.storeBytes(of: self.word(wordIndex, key: key).littleEndian, toByteOffset: position, as: UInt64.self)
            wordIndex &+= 1
            position += 8
        }

        // Trailing bytes of a last, partial word.
        if position < count {
            let word = self.word(wordIndex, key: key)
            var shift: UInt64 = 0
            while position < count {
                base.storeBytes(of: UInt8(truncatingIfNeeded: word >> shift), toByteOffset: position, as: UInt8.self)
                shift += 8
                position += 1
            }
        }
    }

    /// Overwrites `buffer` with the content for `seed` starting at content offset `offset`.
    public static func fill<Buffer: MutableCollection<UInt8>>(_ buffer: inout Buffer, seed: UInt64, offset: Int) {
        let done: Void? = buffer.withContiguousMutableStorageIfAvailable { storage in
            self.fill(UnsafeMutableRawBufferPointer(storage), seed: seed, offset: offset)
        }
        if done == nil {
            var contentOffset = offset
            for index in buffer.indices {
                buffer[index] = self.byte(at: contentOffset, seed: seed)
                contentOffset += 1
            }
        }
    }

    /// Separates seeds so that nearby seeds do not give overlapping word streams.
    @inline(__always)
    static func key(_ seed: UInt64) -> UInt64 {
        self.mix(seed ^ 0x6A09_E667_F3BC_C908)
    }

    /// The 8 content bytes of word `index` (bytes `8 * index ..< 8 * index + 8`).
    @inline(__always)
    static func word(_ index: UInt64, key: UInt64) -> UInt64 {
        self.mix(index &+ key)
    }

    /// SplitMix64's finaliser: cheap and well distributed, which is all test content needs.
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
