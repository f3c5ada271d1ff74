/// CRC-32 (IEEE 802.3, the polynomial gzip uses), computed slicing-by-8.
///
/// gzip's trailer needs the CRC of the uncompressed content. Pulling in zlib for that would add a
/// system dependency the test server does not otherwise need, and a table-driven CRC is a few
/// lines; slicing-by-8 keeps it fast enough that `gzip=1` bodies of many megabytes stay cheap.
struct CRC32 {
    /// The running CRC, pre- and post-conditioned as gzip specifies.
    private(set) var value: UInt32 = 0

    /// Feeds `bytes` into the running CRC.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = ~self.value
        var index = 0
        let count = bytes.count
        Self.tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self)) ^ crc
                let high = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self))
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        self.value = ~crc
    }

    /// Eight 256-entry tables: table 0 is the classic byte table, table k advances k more bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()
}
