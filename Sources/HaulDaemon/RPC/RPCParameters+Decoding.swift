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

extension RPCParameters {
    /// Parameter `index`, an array of `T` (`haul.addGroup`'s requests), decoded as `decoded`
    /// does, with a long array decoded in slices at once, one task per core. An element that
    /// `plain` reads (`DownloadRequest.plain`) is taken as it reads it; any other goes through
    /// `JSONDecoder` on its own.
    ///
    /// Why: a batch's requests are decoded before any of them can start, while the other
    /// cores wait; 5,000 requests took about 40 ms on one core (each a URL parsed and checked).
    /// When an element is refused, the whole array is decoded again in one piece, so that the
    /// message names the element as `decoded`'s does (`requests[3].url is required…`).
    func decodedArray<T: Decodable & Sendable>(
        _ index: Int, _ name: String, of type: T.Type = T.self,
        plain: (@Sendable (JSONValue) -> T?)? = nil
    ) async throws(JSONRPCError) -> [T] {
        guard case .array(let elements)? = self[index] else { return try decoded(index, name) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard cores > 1, elements.count >= 2 * Self.shortestSlice else {
            guard let all = Self.decodedElements(elements[...], plain: plain) else { return try decoded(index, name) }
            return all
        }
        let sliceLength = max(Self.shortestSlice, (elements.count + cores - 1) / cores)
        let starts = Array(stride(from: 0, to: elements.count, by: sliceLength))
        let slices = await withTaskGroup(of: (Int, [T]?).self) { group in
            for (position, start) in starts.enumerated() {
                let slice = elements[start..<min(start + sliceLength, elements.count)]
                group.addTask { (position, Self.decodedElements(slice, plain: plain)) }
            }
            var slices = [[T]?](repeating: nil, count: starts.count)
            for await (position, decoded) in group { slices[position] = decoded }
            return slices
        }
        guard slices.allSatisfy({ $0 != nil }) else { return try decoded(index, name) }
        return slices.flatMap { $0 ?? [] }
    }

    /// Each element as `plain` reads it, or else as `JSONDecoder` decodes it; nil as soon as
    /// one is refused. Without `plain`, the elements are decoded in one call.
    private static func decodedElements<T: Decodable>(_ elements: ArraySlice<JSONValue>, plain: ((JSONValue) -> T?)?) -> [T]? {
        guard let plain else { return try? JSONDecoder().decode([T].self, from: JSONRPCEncoding.encode(.array(Array(elements)))) }
        var decoded: [T] = []
        decoded.reserveCapacity(elements.count)
        for element in elements {
            if let value = plain(element) {
                decoded.append(value)
            } else if let value = try? JSONDecoder().decode(T.self, from: JSONRPCEncoding.encode(element)) {
                decoded.append(value)
            } else {
                return nil
            }
        }
        return decoded
    }

    /// Below twice this, an array is decoded in one piece: a task costs more than it saves.
    private static let shortestSlice = 256
}
