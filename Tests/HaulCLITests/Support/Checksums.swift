import Foundation
import Crypto
import HaulTestServer

/// Test content and its digests, as the tests pass them to `--checksum` and `checksum=`.
enum Checksums {
    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    static func content(seed: UInt64, size: Int) -> [UInt8] {
        TestContent.bytes(seed: seed, size: size)
    }
}
