import Foundation

/// Encodes and decodes the download table's JSON columns.
///
/// One instance serves a whole batch, so the JSON coders are created once per transaction,
/// not once per row. The columns every row has are written by `JSONText`; the coders serve
/// the rare ones (an error, transfer options) and reading.
///
/// The JSON shapes are the store's own (`ValidatorColumn`, checksums as `"sha256=…"` strings,
/// headers as `[name, value]` pairs) rather than the model types' synthesized `Codable`
/// output: renaming a property of a public model type must not make old databases unreadable.
/// `PlacementIntent` and `StoredError` are stored as they are, since they exist for the store.
struct JSONColumns {
    private let encoder: JSONEncoder
    private let decoder = JSONDecoder()

    init() {
        encoder = JSONEncoder()
        // Stable text for equal values (dictionaries would otherwise come out in any order).
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    // MARK: Encoding

    // The columns every row carries are written by `JSONText`, not `JSONEncoder`: see there.

    func encode(headers: [HeaderField]) -> String {
        JSONText.pairs(headers.map { ($0.name, $0.value) })
    }

    func encode(checksums: [Checksum]) -> String {
        JSONText.strings(checksums.map(\.description))
    }

    func encode(metadata: [String: String]) -> String {
        JSONText.object(metadata)
    }

    func encode(validator: Validator?) -> String? {
        switch validator {
        case nil: return nil
        case .etag(let value): return JSONText.object(sortedMembers: [("etag", JSONText.quoted(value))])
        case .lastModified(let value): return JSONText.object(sortedMembers: [("lastModified", JSONText.quoted(value))])
        }
    }

    func encode(placement: PlacementIntent?) -> String? {
        placement?.jsonText
    }

    func encode<Value: Encodable>(optional value: Value?) throws -> String? {
        guard let value else { return nil }
        return try text(value)
    }

    private func text<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    // MARK: Decoding

    func decodeHeaders(_ text: String) throws -> [HeaderField] {
        if text == "[]" { return [] }
        return try value([[String]].self, text).map { pair in
            guard pair.count == 2 else { throw StoredRowError("a header is not a [name, value] pair: \(pair)") }
            return HeaderField(name: pair[0], value: pair[1])
        }
    }

    func decodeChecksums(_ text: String) throws -> [Checksum] {
        if text == "[]" { return [] }
        return try value([String].self, text).map { try Checksum(parsing: $0) }
    }

    func decodeMetadata(_ text: String) throws -> [String: String] {
        if text == "{}" { return [:] }
        if let members = JSONFlatReader.object(text) {
            var metadata: [String: String] = [:]
            for (key, member) in members {
                guard case .string(let string) = member else { return try value([String: String].self, text) }
                metadata[key] = string
            }
            return metadata
        }
        return try value([String: String].self, text)
    }

    func decodePlacement(_ text: String?) throws -> PlacementIntent? {
        guard let text else { return nil }
        return try PlacementIntent(jsonText: text) ?? value(PlacementIntent.self, text)
    }

    func decodeValidator(_ text: String?) throws -> Validator? {
        guard let text else { return nil }
        return try value(ValidatorColumn.self, text).validator()
    }

    func decode<Value: Decodable>(optional type: Value.Type, _ text: String?) throws -> Value? {
        guard let text else { return nil }
        return try value(type, text)
    }

    private func value<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        try decoder.decode(type, from: Data(text.utf8))
    }
}

/// A validator as stored: `{"etag":"\"abc\""}` or `{"lastModified":"Wed, 21 Oct 2015 07:28:00 GMT"}`.
private struct ValidatorColumn: Codable {
    var etag: String?
    var lastModified: String?

    init(_ validator: Validator) {
        switch validator {
        case .etag(let value): etag = value
        case .lastModified(let value): lastModified = value
        }
    }

    func validator() throws -> Validator {
        switch (etag, lastModified) {
        case (let etag?, nil): return .etag(etag)
        case (nil, let date?): return .lastModified(date)
        default: throw StoredRowError("a validator holds exactly one of etag and lastModified")
        }
    }
}

/// A row whose content does not have the store's shape (a JSON column, an unknown state…).
struct StoredRowError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
