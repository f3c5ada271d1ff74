import Foundation

/// The resume rules applied to the extra connections of a segmented download: each asks for a
/// closed range with `If-Range`, and its answer is used only if it is provably a slice of the
/// very file the other connections are writing. Anything else stops the segmented transfer;
/// bytes of two versions of a file are never mixed.
extension ResumePolicy {
    /// What an answer to a segment's range request means.
    enum SegmentVerdict: Sendable, Hashable {
        /// A `206` for the asked start, same total, same validator, identity coding: write it.
        case use
        /// The file on the server is not the one being assembled (`If-Range` failed with a new
        /// validator, another total, a `416`): every byte so far is worthless.
        case fileChanged(reason: String)
        /// The same file, but ranges cannot be used for it (ignored, wrong start, encoded):
        /// go on with one connection from the contiguous bytes.
        case rangesUnusable(reason: String)
        /// This connection's request failed (an error status); other connections may go on.
        case failed(HaulError)
    }

    /// `Range: bytes=from-(to-1)` and `If-Range`, for bytes `from..<to`.
    static func rangeHeaders(from: Int64, to: Int64, validator: Validator) -> [HeaderField] {
        [
            HeaderField(name: "Range", value: "bytes=\(from)-\(to - 1)"),
            HeaderField(name: "If-Range", value: validator.headerValue),
        ]
    }

    /// Judges the answer to a request for bytes from `requestedStart` of the file described by
    /// `entity` (its validator and total length, from the response that started the download).
    ///
    /// A `206` is used only if it carries exactly the download's strong validator
    /// (`carriesValidator(of:header:)`), from every URI alike: a server that ignores `If-Range`
    /// and sends no validator (or a weak one) could be serving another file of the same
    /// length, so that is `fileChanged`. `strict`: the answer comes from another URI than the
    /// one the validator came from (a mirror), which is then dropped rather than believed.
    static func judgeSegment(
        requestedStart: Int64, entity: Entity, status: Int, header: (String) -> String?, url: String, strict: Bool = false
    ) -> SegmentVerdict {
        if status >= 400 && status != 416 {
            return .failed(statusError(status, header: header, url: url))
        }
        let now = Self.entity(status: status, header: header)
        switch status {
        case 206:
            guard let range = header("content-range").flatMap(ContentRange.init(parsing:)) else {
                return .rangesUnusable(reason: "\(url) answered 206 without a usable Content-Range")
            }
            if let total = entity.totalLength, range.total != total {
                return .fileChanged(reason: "\(url) now has \(range.total.map(String.init) ?? "an unknown number of") bytes, not \(total)")
            }
            if let before = entity.validator, let after = now.validator, before != after {
                return .fileChanged(reason: "\(url) changed (its validator is now \(after.headerValue))")
            }
            guard carriesValidator(of: entity, header: header) else {
                return .fileChanged(reason: "\(url) does not send the download's validator (no ETag, or only a weak one), so its bytes may be of another file")
            }
            guard range.start == requestedStart else {
                return .rangesUnusable(reason: "\(url) sent bytes from \(range.start) when asked for \(requestedStart)")
            }
            let encoding = header("content-encoding")?.trimmingBlanks().lowercased() ?? ""
            guard encoding.isEmpty || encoding == "identity" else {
                return .rangesUnusable(reason: "\(url) sent a content-encoded range")
            }
            return .use
        case 416:
            return .fileChanged(reason: "\(url) cannot satisfy a range inside its announced length (416)")
        case 200...299:
            // If-Range failed (a new file) or the range was ignored (the same file, whole).
            if let before = entity.validator, strict ? carries(before, header: header) : now.validator == before {
                return .rangesUnusable(reason: "\(url) ignored a range request")
            }
            return .fileChanged(reason: "\(url) changed (If-Range no longer matches)")
        default:
            return .failed(HaulError(.invalidResponse, "\(url) answered a range request with status \(status)", httpStatus: status))
        }
    }
}
