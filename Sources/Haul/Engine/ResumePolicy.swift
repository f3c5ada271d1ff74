import Foundation

/// DESIGN.md's resume rules as pure functions of a response head, tested without I/O.
///
/// 1. The first response's validator (a strong ETag, else Last-Modified) and length are kept.
/// 2. A resume sends `Range: bytes=N-` with `If-Range: <validator>`.
/// 3. `206` whose Content-Range starts at N, whose total matches, and which carries exactly the
///    kept validator (the same strong ETag, or the same Last-Modified of a known length) →
///    append; a `206` without it proves nothing → ask again without a range.
/// 4. `200` → the server ignored the range or the file changed: start again from 0. Never append.
/// 5. `416`, or a Content-Range that does not match → ask again without a range.
/// 6. No validator, a weak ETag, a Last-Modified without a length, a content coding other than
///    identity, or `Accept-Ranges: none` → the bytes cannot be resumed or split; any retry
///    starts from 0.
enum ResumePolicy {
    /// What the server said about the entity in one response.
    struct Entity: Sendable, Hashable {
        var validator: Validator?
        /// Total length of the entity, if announced.
        var totalLength: Int64?
        /// Whether a later request may resume these bytes (rule 6).
        var isResumable: Bool
    }

    /// What to do with a response.
    enum Decision: Sendable, Hashable {
        /// Append the body at `offset`.
        case append(offset: Int64)
        /// Cut the part file to 0 and write the body from the start.
        case writeFromStart
        /// Discard this response and send the request again without Range.
        case requestAgainWithoutRange(reason: String)
        /// The response is an error.
        case fail(HaulError)
    }

    /// Headers for a request that continues at `offset` (rule 2); empty for a fresh start.
    static func rangeHeaders(offset: Int64, validator: Validator?) -> [HeaderField] {
        guard offset > 0, let validator else { return [] }
        return [
            HeaderField(name: "Range", value: "bytes=\(offset)-"),
            HeaderField(name: "If-Range", value: validator.headerValue),
        ]
    }

    /// Reads the entity description from response headers (rules 1 and 6).
    /// `header` looks a header up case-insensitively.
    static func entity(status: Int, header: (String) -> String?) -> Entity {
        let encoding = header("content-encoding")?.trimmingBlanks().lowercased() ?? ""
        let identity = encoding.isEmpty || encoding == "identity"
        let rangesRefused = header("accept-ranges").map { HeaderValue.contains($0, lowercaseASCII: "none") } ?? false
        var validator: Validator?
        var weakETag = false
        if let etag = header("etag")?.trimmingBlanks(), !etag.isEmpty {
            if etag.hasPrefix("W/") { weakETag = true } else { validator = .etag(etag) }
        }
        if validator == nil, !weakETag, let modified = header("last-modified"), HTTPDate.parse(modified) != nil {
            validator = .lastModified(modified)
        }
        var total: Int64?
        if status == 206, let range = header("content-range").flatMap(ContentRange.init(parsing:)) {
            total = range.total
        } else if let length = header("content-length").flatMap({ Int64($0.trimmingBlanks()) }), length >= 0 {
            total = length
        }
        // A date proves the same file only together with the same length (rule 1): without a
        // known length it proves nothing.
        let proves: Bool = switch validator {
        case .etag: true
        case .lastModified: total != nil
        case nil: false
        }
        return Entity(
            validator: validator,
            totalLength: total,
            isResumable: proves && identity && !rangesRefused)
    }

    /// Whether a response carries exactly `validator`: the same ETag, or (for a download whose
    /// validator is a date) the same Last-Modified. A weak ETag or no validator never does.
    static func carries(_ validator: Validator, header: (String) -> String?) -> Bool {
        switch validator {
        case .etag(let tag): return header("etag")?.trimmingBlanks() == tag.trimmingBlanks()
        case .lastModified(let date): return header("last-modified")?.trimmingBlanks() == date.trimmingBlanks()
        }
    }

    /// Whether a `206` carries exactly the validator of `entity`, the kept bytes' file: the
    /// same strong ETag, or the same Last-Modified date of a file whose length is known (the
    /// caller compares the totals). No validator, or a weak ETag, proves nothing: a server
    /// that ignores `If-Range` could be serving a changed file under it.
    static func carriesValidator(of entity: Entity?, header: (String) -> String?) -> Bool {
        guard let entity, let validator = entity.validator, carries(validator, header: header) else { return false }
        if case .lastModified = validator, entity.totalLength == nil { return false }
        return true
    }

    /// Whether an answer to `Range: bytes=requestedOffset-` with `If-Range` provably continues
    /// the file `entity` describes: a `206` from that offset, of the same total, identity coded,
    /// carrying exactly the same strong validator. What a URI other than the one the validator
    /// came from must prove before its bytes are appended.
    static func provesSameFile(requestedOffset: Int64, entity: Entity, status: Int, header: (String) -> String?) -> Bool {
        guard status == 206, carriesValidator(of: entity, header: header),
              let range = header("content-range").flatMap(ContentRange.init(parsing:)), range.start == requestedOffset
        else { return false }
        if let total = entity.totalLength, range.total != total { return false }
        let encoding = header("content-encoding")?.trimmingBlanks().lowercased() ?? ""
        return encoding.isEmpty || encoding == "identity"
    }

    /// Decides how to use a response to a request sent with `requestedOffset` (0 = no Range),
    /// given what the earlier response said (`previous`).
    ///
    /// A `206` is appended only if it carries exactly the download's strong validator
    /// (`carriesValidator(of:header:)`), from every URI alike: one without a validator, or with
    /// only a weak ETag, proves nothing (a server that ignores `If-Range` may be serving a
    /// changed file), so the request is sent again without a range and the file starts over.
    /// `strict`: the response comes from another URI than the one `previous` came from (a
    /// mirror); it only changes what the reason says.
    static func decide(
        requestedOffset: Int64, previous: Entity?, status: Int, header: (String) -> String?, url: String, strict: Bool = false
    ) -> Decision {
        if status >= 400 && status != 416 {
            return .fail(statusError(status, header: header, url: url))
        }
        if requestedOffset == 0 {
            guard (200...299).contains(status), status != 206 else {
                if status == 416 { return .fail(HaulError(.httpStatus, "\(url) answered 416 to a request without a range", httpStatus: 416)) }
                return .fail(HaulError(.invalidResponse, "\(url) answered with status \(status), which Haul cannot use", httpStatus: status))
            }
            return .writeFromStart
        }
        switch status {
        case 206:
            guard let range = header("content-range").flatMap(ContentRange.init(parsing:)) else {
                return .requestAgainWithoutRange(reason: "206 without a usable Content-Range")
            }
            guard range.start == requestedOffset else {
                return .requestAgainWithoutRange(reason: "Content-Range starts at \(range.start), not at the requested \(requestedOffset)")
            }
            if let expected = previous?.totalLength, range.total != expected {
                return .requestAgainWithoutRange(reason: "Content-Range total \(range.total.map(String.init) ?? "*") differs from the recorded \(expected)")
            }
            let now = entity(status: status, header: header)
            if let before = previous?.validator, let after = now.validator, before != after {
                return .requestAgainWithoutRange(reason: "the validator changed")
            }
            guard carriesValidator(of: previous, header: header) else {
                return .requestAgainWithoutRange(reason: strict
                    ? "the mirror's range does not carry the download's validator"
                    : "the range does not carry the download's validator (no ETag, or only a weak one), so it may be of a changed file")
            }
            if !now.isResumable, header("content-encoding") != nil {
                return .requestAgainWithoutRange(reason: "the partial response is content-encoded")
            }
            return .append(offset: requestedOffset)
        case 416:
            return .requestAgainWithoutRange(reason: "the server cannot satisfy the range (416)")
        case 200...299:
            return .writeFromStart
        default:
            return .fail(HaulError(.invalidResponse, "\(url) answered with status \(status), which Haul cannot use", httpStatus: status))
        }
    }

    static func statusError(_ status: Int, header: (String) -> String?, url: String) -> HaulError {
        let retryAfter = header("retry-after").flatMap { RetryPolicy.parseRetryAfter($0) }
        return HaulError(.httpStatus, "\(url) answered HTTP \(status)", httpStatus: status, retryAfter: retryAfter)
    }
}

/// A parsed `Content-Range: bytes START-END/TOTAL` (TOTAL may be `*`).
struct ContentRange: Sendable, Hashable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init?(parsing text: String) {
        let trimmed = text.trimmingBlanks()
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingBlanks()
        let slash = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard slash.count == 2 else { return nil }
        let bounds = slash[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start >= 0, end >= start else {
            return nil
        }
        var total: Int64?
        if slash[1] != "*" {
            guard let value = Int64(slash[1]), value > end else { return nil }
            total = value
        }
        self.start = start
        self.end = end
        self.total = total
    }
}
