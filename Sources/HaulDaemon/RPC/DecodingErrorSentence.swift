/// A `DecodingError` met while decoding a JSON-RPC parameter, as one sentence for the person
/// who wrote the JSON: the field by its path in the parameter, and what was expected.
///
/// Foundation's own text (`Key 'groupOrder' not found in keyed decoding container. Debug
/// description: …`) names Swift's containers and types, not the JSON. Here the path is written
/// as it would be in JavaScript (`requests[3].url`), what was expected in JSON's words, and
/// what was found is read from the JSON itself:
///
/// - `requests[3].url is required but missing`
/// - `requests[0].priority must be an integer, got a string`
/// - `settings.groupOrder must be one of "interleaved", "sequential", got "fast"` (Haul's
///   decoders phrase their refusals to follow the field's name, see `DecodingValidation.swift`)
enum DecodingErrorSentence {
    /// The sentence for `error`, raised while decoding `value`, the parameter called `root`.
    static func sentence(_ error: DecodingError, root: String, in value: JSONValue) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(root, context.codingPath + [key], in: value)) is required but missing"
        case .valueNotFound(let type, let context):
            return "\(path(root, context.codingPath, in: value)) must be \(expected(type)), got null"
        case .typeMismatch(let type, let context):
            let found = member(at: context.codingPath, in: value)?.kindDescription ?? "a value of another kind"
            return "\(path(root, context.codingPath, in: value)) must be \(expected(type)), got \(found)"
        case .dataCorrupted(let context):
            let field = path(root, context.codingPath, in: value)
            var why = context.debugDescription
            while why.hasSuffix(".") { why.removeLast() }
            if why.hasPrefix("must ") || why.hasPrefix("is ") { return "\(field) \(why)" }
            // Foundation refuses a number that does not fit an integer field (`1.5`, `1e30`)
            // as "not valid JSON" at the top, losing the field; the JSON here came from a
            // `JSONValue`, so it is valid, and no `haul.*` field takes such a number: name the
            // first one (in key order).
            if context.codingPath.isEmpty,
               let (numberPath, number) = firstNonInteger(in: value, at: []) {
                return "\(path(root, numberPath, in: value)) must be an integer, got \(number)"
            }
            return "\(field) is not valid: \(why)"
        @unknown default:
            return "\(root) is not valid: \(error)"
        }
    }

    /// `requests[3].url`: indexes in brackets where the JSON has an array, names after dots.
    static func path(_ root: String, _ codingPath: [any CodingKey], in value: JSONValue) -> String {
        var text = root
        var node: JSONValue? = value
        for key in codingPath {
            let isIndex: Bool
            switch node {
            case .array?: isIndex = key.intValue != nil
            case .object?: isIndex = false
            default: isIndex = key.intValue != nil && key.stringValue.hasPrefix("Index ")
            }
            text += isIndex ? "[\(key.intValue ?? 0)]" : ".\(key.stringValue)"
            node = node.flatMap { child(of: $0, key) }
        }
        return text
    }

    /// The JSON found at `codingPath`, nil when the path leads nowhere.
    static func member(at codingPath: [any CodingKey], in value: JSONValue) -> JSONValue? {
        var node = value
        for key in codingPath {
            guard let next = child(of: node, key) else { return nil }
            node = next
        }
        return node
    }

    /// The path and value of the first number that is not an integer Swift's `Int` can hold.
    private static func firstNonInteger(in node: JSONValue, at codingPath: [any CodingKey]) -> ([any CodingKey], Double)? {
        switch node {
        case .double(let number) where number.rounded() != number || abs(number) >= 0x1p63:
            return (codingPath, number)
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = firstNonInteger(in: element, at: codingPath + [PathKey(index: index)]) { return found }
            }
            return nil
        case .object(let members):
            for key in members.keys.sorted() {
                if let found = firstNonInteger(in: members[key]!, at: codingPath + [PathKey(name: key)]) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    /// A step of a path found by walking the JSON rather than by a decoder.
    private struct PathKey: CodingKey {
        let stringValue: String
        let intValue: Int?
        init(name: String) { (stringValue, intValue) = (name, nil) }
        init(index: Int) { (stringValue, intValue) = ("Index \(index)", index) }
        init?(stringValue: String) { self.init(name: stringValue) }
        init?(intValue: Int) { self.init(index: intValue) }
    }

    private static func child(of node: JSONValue, _ key: any CodingKey) -> JSONValue? {
        switch node {
        case .array(let elements):
            guard let index = key.intValue, elements.indices.contains(index) else { return nil }
            return elements[index]
        case .object(let members):
            return members[key.stringValue]
        default:
            return nil
        }
    }

    /// What a Swift type is in JSON's words.
    static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is any BinaryInteger.Type: return "an integer"
        case is any BinaryFloatingPoint.Type: return "a number"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") || name.contains("UnkeyedDecodingContainer") { return "an array" }
            if name.hasPrefix("Dictionary") || name.contains("KeyedDecodingContainer") { return "an object" }
            return "a \(name)"
        }
    }
}
