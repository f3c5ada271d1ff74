import Foundation

extension RPCParameters {
    /// Parameter `index` decoded from its JSON form (a `DownloadRequest`, `SessionSettings`…),
    /// refused in one sentence naming the field when it does not fit: `parameter 2 (requests):
    /// requests[3].url is required but missing` (see `DecodingErrorSentence`).
    func decoded<T: Decodable>(_ index: Int, _ name: String, as type: T.Type = T.self) throws(JSONRPCError) -> T {
        guard let value = self[index] else { throw .invalidParams("parameter \(index) (\(name)) is required but missing") }
        return try Self.decode(value, index, name)
    }

    /// As `decoded`, with a missing parameter and an explicit null both "not given".
    func optionalDecoded<T: Decodable>(_ index: Int, _ name: String, as type: T.Type = T.self) throws(JSONRPCError) -> T? {
        guard let value = self[index], value != .null else { return nil }
        return try Self.decode(value, index, name)
    }

    private static func decode<T: Decodable>(_ value: JSONValue, _ index: Int, _ name: String) throws(JSONRPCError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: JSONRPCEncoding.encode(value))
        } catch let error as DecodingError {
            throw .invalidParams("parameter \(index) (\(name)): \(DecodingErrorSentence.sentence(error, root: name, in: value))")
        } catch {
            throw .invalidParams("parameter \(index) (\(name)) could not be read: \(error)")
        }
    }
}
