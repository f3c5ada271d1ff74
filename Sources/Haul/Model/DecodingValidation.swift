import Foundation

// Values decoded from JSON (the daemon's `haul.*` parameters, its answers to
// `BackgroundSession`, the store's JSON columns) are checked as the initialisers and `add`
// check values made in code: a decoder never builds a value that code could not have built.
// Each `init(from:)` reads the same keys the synthesised `encode(to:)` writes and refuses a
// bad value with `DecodingError.dataCorrupted`, naming the field and saying why.

/// The keys of a type's JSON form, by property name (as the synthesised encoding writes them).
private struct PropertyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

private extension KeyedDecodingContainer where K == PropertyKey {
    func value<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        try decode(T.self, forKey: PropertyKey(name))
    }

    func optional<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T? {
        try decodeIfPresent(T.self, forKey: PropertyKey(name))
    }

    /// Runs a validating initialiser, reporting its refusal as a decoding error of `name`.
    func checked<T>(_ name: String, _ make: () throws(HaulError) -> T) throws -> T {
        do {
            return try make()
        } catch {
            throw DecodingError.dataCorruptedError(forKey: PropertyKey(name), in: self, debugDescription: error.message)
        }
    }
}

extension Checksum {
    /// Decodes `{"algorithm": "sha256", "hex": "…"}` through `init(_:hex:)`: the length and the
    /// hex digits are checked, and the digest is kept in lower case.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        let algorithm = try container.value("algorithm", as: Algorithm.self)
        let hex = try container.value("hex", as: String.self)
        self = try container.checked("hex") { () throws(HaulError) in try Checksum(algorithm, hex: hex) }
    }
}

extension HeaderField {
    /// Decodes `{"name": …, "value": …}` and refuses what `init(parsing:)` refuses: an empty
    /// name, a name with blanks or a colon, a value with a line break (which would smuggle
    /// another header into the request).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        let name = try container.value("name", as: String.self)
        let value = try container.value("value", as: String.self)
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0.isNewline || $0 == ":" }) else {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("name"), in: container, debugDescription: "'\(name)' is not a valid header name")
        }
        guard !value.contains(where: \.isNewline) else {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("value"), in: container, debugDescription: "the value of header '\(name)' contains a line break")
        }
        self.init(name: name, value: value)
    }
}

extension DownloadRequest {
    /// The connections one download may be split over (`-s`, aria2's `split`).
    package static let splitRange = 1...1024

    /// Decodes a request and checks what `add` checks before touching the file system: an
    /// http or https URL with a host, a file name that is one safe path component, `split`
    /// in `splitRange`, a speed limit that is not negative, http or https mirrors, a
    /// `waitDeadline` that is an ISO 8601 date, and valid checksums and headers
    /// (checked by their own decoders). The directory is checked where it is used: `add`
    /// requires it to exist, and the daemon confines it on TCP.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        let url = try container.value("url", as: URL.self)
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("url"), in: container,
                debugDescription: "'\(url.absoluteString)' is not an http or https URL with a host")
        }
        let fileName = try container.optional("fileName", as: String.self)
        if let fileName {
            try container.checked("fileName") { () throws(HaulError) in try FileNaming.validateUserFileName(fileName) }
        }
        let split = try container.optional("split", as: Int.self)
        if let split, !Self.splitRange.contains(split) {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("split"), in: container,
                debugDescription: "split is \(Self.splitRange.lowerBound) to \(Self.splitRange.upperBound), got \(split)")
        }
        let limit = try container.optional("maxBytesPerSecond", as: Int64.self)
        if let limit, limit < 0 {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("maxBytesPerSecond"), in: container,
                debugDescription: "a speed limit is 0 or more bytes per second, got \(limit)")
        }
        self.init(
            url: url,
            directory: try container.value("directory"),
            fileName: fileName,
            headers: try container.value("headers"),
            checksums: try container.value("checksums"),
            priority: try container.value("priority"),
            conflictPolicy: try container.value("conflictPolicy"),
            metadata: try container.value("metadata"),
            split: split,
            maxBytesPerSecond: limit,
            // Absent in requests encoded before mirrors existed: none.
            mirrors: try container.optional("mirrors", as: [URL].self) ?? [],
            // Absent in requests encoded before it existed, and in most others: none.
            waitDeadline: try container.optional("waitDeadline", as: String.self).map { text in
                try container.checked("waitDeadline") { () throws(HaulError) in try ISO8601Text.date(text) }
            })
        let request = self
        try container.checked("mirrors") { () throws(HaulError) in try request.validateMirrors() }
    }
}

extension DownloadRequest {
    /// Writes the keys `init(from:)` reads, as the synthesised encoding would, except that
    /// `waitDeadline` is an ISO 8601 date (in UTC, to the millisecond) rather than Foundation's
    /// default number of seconds since 2001, so that people and other languages can write it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: PropertyKey.self)
        try container.encode(url, forKey: PropertyKey("url"))
        try container.encode(mirrors, forKey: PropertyKey("mirrors"))
        try container.encode(headers, forKey: PropertyKey("headers"))
        try container.encode(directory, forKey: PropertyKey("directory"))
        try container.encodeIfPresent(fileName, forKey: PropertyKey("fileName"))
        try container.encode(checksums, forKey: PropertyKey("checksums"))
        try container.encode(priority, forKey: PropertyKey("priority"))
        try container.encode(conflictPolicy, forKey: PropertyKey("conflictPolicy"))
        try container.encode(metadata, forKey: PropertyKey("metadata"))
        try container.encodeIfPresent(split, forKey: PropertyKey("split"))
        try container.encodeIfPresent(maxBytesPerSecond, forKey: PropertyKey("maxBytesPerSecond"))
        try container.encodeIfPresent(waitDeadline.map(ISO8601Text.text), forKey: PropertyKey("waitDeadline"))
    }
}

/// ISO 8601 dates as JSON text: `2026-12-01T18:00:00Z`, with or without fractional seconds
/// and with any offset when read, in UTC with milliseconds when written.
enum ISO8601Text {
    static func date(_ text: String) throws(HaulError) -> Date {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text) { return date }
        throw HaulError(.invalidRequest, "'\(text)' is not an ISO 8601 date and time such as 2026-12-01T18:00:00Z")
    }

    static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

extension SessionSettings {
    /// Decodes settings and refuses limits no session can run with: fewer than one download
    /// at once, in all or per host.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        let concurrent = try container.value("maxConcurrentDownloads", as: Int.self)
        guard concurrent >= 1 else {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("maxConcurrentDownloads"), in: container,
                debugDescription: "at least 1 download must be allowed at once, got \(concurrent)")
        }
        let perHost = try container.optional("maxDownloadsPerHost", as: Int.self)
        if let perHost, perHost < 1 {
            throw DecodingError.dataCorruptedError(
                forKey: PropertyKey("maxDownloadsPerHost"), in: container,
                debugDescription: "at least 1 download per host must be allowed, got \(perHost)")
        }
        self.init(
            maxConcurrentDownloads: concurrent, maxDownloadsPerHost: perHost,
            groupOrder: try container.value("groupOrder"))
    }
}
