import Foundation

/// Turns responses and notifications into bytes: keys sorted (stable output, easy to compare),
/// slashes not escaped (URLs and paths stay readable), written by `JSONValueWriter` exactly as
/// `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes` wrote them before.
enum JSONRPCEncoding {
    static func encode(_ value: JSONValue) -> Data {
        // Only a non-finite number can fail, and no method returns one; answer something valid
        // rather than nothing.
        guard let bytes = JSONValueWriter.write(value) else {
            return Data(#"{"error":{"code":-32603,"message":"Internal error: the result could not be encoded"},"id":null,"jsonrpc":"2.0"}"#.utf8)
        }
        return Data(bytes)
    }
}
