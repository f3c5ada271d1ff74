import Foundation

// Values decoded from JSON (the daemon's `haul.*` parameters, its answers to
// `BackgroundSession`, the store's JSON columns) are checked as the initialisers and `add`
// check values made in code: a decoder never builds a value that code could not have built.
// Each `init(from:)` reads the keys the `encode(to:)` writes, and takes the initialiser's
// default for every one that is absent or null, so that a person writes only what differs
// (`{"url": …, "directory": …}` is a whole request). Keys it does not know are ignored, so
// that an older reader accepts what a newer writer sends. A bad value is refused with
// `DecodingError.dataCorrupted` whose description reads after the field's name ("must be …",
// "is …"), so that the daemon can say `requests[0].split must be from 1 to 1024, got 0`.

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

    /// The value of `name`, nil when the key is absent or null.
    func optional<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T? {
        try decodeIfPresent(T.self, forKey: PropertyKey(name))
    }

    /// One of an enumeration's names, nil when absent or null, refused with the list of names:
    /// a typo in `"groupOrder": "sequentail"` is answered with what it could have been.
    func choice<T: RawRepresentable & CaseIterable>(
        _ name: String, as type: T.Type = T.self, parsing parse: (String) -> T? = T.init(rawValue:)
    ) throws -> T? where T.RawValue == String {
        try optional(name, as: String.self).map { try chosen(name, $0, parse) }
    }

    /// One of an enumeration's names, required.
    func requiredChoice<T: RawRepresentable & CaseIterable>(
        _ name: String, as type: T.Type = T.self, parsing parse: (String) -> T? = T.init(rawValue:)
    ) throws -> T where T.RawValue == String {
        try chosen(name, try value(name, as: String.self), parse)
    }

    private func chosen<T: RawRepresentable & CaseIterable>(
        _ name: String, _ text: String, _ parse: (String) -> T?
    ) throws -> T where T.RawValue == String {
        guard let value = parse(text) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw refusal(name, "must be one of \(names), got \"\(text)\"")
        }
        return value
    }

    /// An http or https URL with a host, as `add` requires of a request's URL.
    func httpURL(_ name: String) throws -> URL {
        let text = try value(name, as: String.self)
        guard let url = DownloadRequest.decodedURL(text) else {
            throw refusal(name, "must be an http or https URL with a host, got '\(text)'")
        }
        return url
    }

    /// A directory as `DownloadRequest.decodedDirectory` reads it.
    func directory(_ name: String) throws -> URL {
        let text = try value(name, as: String.self)
        guard let url = DownloadRequest.decodedDirectory(text) else {
            throw refusal(name, "must be an absolute path or a file URL, got '\(text)'")
        }
        return url
    }

    /// Runs a validating initialiser, reporting its refusal as a decoding error of `name`.
    func checked<T>(_ name: String, _ make: () throws(HaulError) -> T) throws -> T {
        do {
            return try make()
        } catch {
            throw refusal(name, "is not valid: \(error.message)")
        }
    }

    func refusal(_ name: String, _ why: String) -> DecodingError {
        DecodingError.dataCorruptedError(forKey: PropertyKey(name), in: self, debugDescription: why)
    }
}

extension Checksum {
    /// Decodes `{"algorithm": "sha256", "hex": "…"}` through `init(_:hex:)`: the length and the
    /// hex digits are checked, and the digest is kept in lower case. The algorithm may be
    /// written as aria2 writes it (`sha-256`) and in any case. Both keys are required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        let algorithm = try container.requiredChoice("algorithm", parsing: Algorithm.init(name:))
        let hex = try container.value("hex", as: String.self)
        self = try container.checked("hex") { () throws(HaulError) in try Checksum(algorithm, hex: hex) }
    }
}

extension HeaderField {
    /// Decodes `{"name": …, "value": …}` (both required) and refuses what `init(parsing:)`
    /// refuses: an empty name, a name with blanks or a colon, a value with a line break (which
    /// would smuggle another header into the request).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        let name = try container.value("name", as: String.self)
        let value = try container.value("value", as: String.self)
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0.isNewline || $0 == ":" }) else {
            throw container.refusal("name", "is not a valid header name (a token without blanks or colons), got '\(name)'")
        }
        guard !value.contains(where: \.isNewline) else {
            throw container.refusal("value", "must be one line: the value of header '\(name)' contains a line break")
        }
        self.init(name: name, value: value)
    }
}

extension DownloadRequest {
    /// The connections one download may be split over (`-s`, aria2's `split`).
    package static let splitRange = 1...1024

    /// A request's URL as its JSON form gives it: an http or https URL with a host, as `add`
    /// requires; nil for anything else. The one rule for every reader of that form (the
    /// decoder, and the daemon's reading of a batch).
    package static func decodedURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false
        else { return nil }
        return url
    }

    /// A request's directory as its JSON form gives it: a file URL (`file:///srv/data/`, what
    /// `encode(to:)` writes) or, as a person writes it, an absolute path (`/srv/data`); nil
    /// when it is neither.
    package static func decodedDirectory(_ text: String) -> URL? {
        if text.hasPrefix("/") { return URL(fileURLWithPath: text, isDirectory: true) }
        return URL(string: text)
    }

    /// Decodes a request: `url` and `directory` are required, every other key takes
    /// `init(url:directory:…)`'s default when absent or null. It checks what `add` checks
    /// before touching the file system: an http or https URL with a host, a file name that is
    /// one safe path component, `split` in `splitRange`, a speed limit that is not negative,
    /// http or https mirrors, a `waitDeadline` that is an ISO 8601 date, and valid checksums
    /// and headers (checked by their own decoders). The directory (a file URL or an absolute
    /// path) is checked where it is used: `add` requires it to exist, and the daemon confines
    /// it on TCP.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        var request = DownloadRequest(url: try container.httpURL("url"), directory: try container.directory("directory"))
        if let fileName = try container.optional("fileName", as: String.self) {
            try container.checked("fileName") { () throws(HaulError) in try FileNaming.validateUserFileName(fileName) }
            request.fileName = fileName
        }
        if let split = try container.optional("split", as: Int.self) {
            guard Self.splitRange.contains(split) else {
                throw container.refusal("split", "must be from \(Self.splitRange.lowerBound) to \(Self.splitRange.upperBound), got \(split)")
            }
            request.split = split
        }
        if let limit = try container.optional("maxBytesPerSecond", as: Int64.self) {
            guard limit >= 0 else { throw container.refusal("maxBytesPerSecond", "must be 0 or more bytes per second, got \(limit)") }
            request.maxBytesPerSecond = limit
        }
        request.headers = try container.optional("headers") ?? request.headers
        request.checksums = try container.optional("checksums") ?? request.checksums
        request.priority = try container.optional("priority") ?? request.priority
        request.conflictPolicy = try container.choice("conflictPolicy") ?? request.conflictPolicy
        request.metadata = try container.optional("metadata") ?? request.metadata
        request.mirrors = try container.optional("mirrors") ?? request.mirrors
        if let deadline = try container.optional("waitDeadline", as: String.self) {
            request.waitDeadline = try container.checked("waitDeadline") { () throws(HaulError) in try ISO8601Text.date(deadline) }
        }
        try container.checked("mirrors") { () throws(HaulError) in try request.validateMirrors() }
        self = request
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
    /// Decodes settings, every key taking `init()`'s default when absent or null, and refuses
    /// limits no session can run with: fewer than one download at once, in all or per host.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PropertyKey.self)
        var settings = SessionSettings()
        if let concurrent = try container.optional("maxConcurrentDownloads", as: Int.self) {
            guard concurrent >= 1 else {
                throw container.refusal("maxConcurrentDownloads", "must allow at least 1 download at once, got \(concurrent)")
            }
            settings.maxConcurrentDownloads = concurrent
        }
        if let perHost = try container.optional("maxDownloadsPerHost", as: Int.self) {
            guard perHost >= 1 else {
                throw container.refusal("maxDownloadsPerHost", "must allow at least 1 download per host, got \(perHost)")
            }
            settings.maxDownloadsPerHost = perHost
        }
        settings.groupOrder = try container.choice("groupOrder") ?? settings.groupOrder
        self = settings
    }
}
