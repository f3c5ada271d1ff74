import Crypto
import Foundation
import Haul

/// aria2's RPC secret: TCP clients send it as `"token:SECRET"`, the first parameter of a call.
///
/// Only its SHA-256 digest is kept, and a candidate is compared digest to digest over all 32
/// bytes, so the time a comparison takes says nothing about how much of a guess was right
/// (nor about the secret's length).
package struct RPCSecret: Sendable {
    private let digest: [UInt8]

    /// A secret given by the user (a configuration value or a flag). It must not be empty.
    package init(_ value: String) throws(HaulError) {
        guard !value.isEmpty else { throw HaulError(.invalidRequest, "the RPC secret must not be empty") }
        digest = Self.hash(value)
    }

    /// Whether `candidate` is the secret, in constant time.
    package func matches(_ candidate: String) -> Bool {
        let other = Self.hash(candidate)
        var difference: UInt8 = 0
        for index in digest.indices { difference |= digest[index] ^ other[index] }
        return difference == 0
    }

    private static func hash(_ value: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(value.utf8)))
    }

    /// A new random secret: 32 bytes from the system's generator, in hex.
    package static func randomValue() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let hex = String(generator.next() as UInt8, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }
}
