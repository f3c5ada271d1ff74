import Foundation

/// Turns responses and notifications into bytes: keys sorted (stable output, easy to compare),
/// slashes not escaped (URLs and paths stay readable).
enum JSONRPCEncoding {
    static func encode(_ value: JSONValue) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            // Only a non-finite number can fail, and no method returns one; answer something
            // valid rather than nothing.
            return Data(#"{"error":{"code":-32603,"message":"Internal error: the result could not be encoded"},"id":null,"jsonrpc":"2.0"}"#.utf8)
        }
    }
}
