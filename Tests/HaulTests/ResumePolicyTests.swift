import Testing
@testable import Haul

@Suite("Resume rules")
struct ResumePolicyTests {
    func headers(_ pairs: [String: String]) -> (String) -> String? {
        let lowered = Dictionary(uniqueKeysWithValues: pairs.map { ($0.key.lowercased(), $0.value) })
        return { lowered[$0.lowercased()] }
    }

    let previous = ResumePolicy.Entity(validator: .etag("\"v1\""), totalLength: 1000, isResumable: true)

    /// Rule 1: a strong ETag is preferred over Last-Modified, and the length is recorded.
    @Test func strongETagIsTheValidator() {
        let entity = ResumePolicy.entity(status: 200, header: headers([
            "ETag": "\"abc\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Content-Length": "42",
        ]))
        #expect(entity.validator == .etag("\"abc\""))
        #expect(entity.totalLength == 42)
        #expect(entity.isResumable)
    }

    /// Rule 1: without an ETag, a valid Last-Modified (with the length) is the validator.
    @Test func lastModifiedFallback() {
        let entity = ResumePolicy.entity(status: 200, header: headers(["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Content-Length": "42"]))
        #expect(entity.validator == .lastModified("Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(entity.isResumable)
    }

    /// Rule 6: a weak ETag, no validator, a content coding, or Accept-Ranges: none make bytes unresumable.
    @Test func unresumableResponses() {
        #expect(!ResumePolicy.entity(status: 200, header: headers(["ETag": "W/\"abc\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])).isResumable)
        #expect(!ResumePolicy.entity(status: 200, header: headers(["Content-Length": "5"])).isResumable)
        #expect(!ResumePolicy.entity(status: 200, header: headers(["ETag": "\"a\"", "Content-Encoding": "gzip"])).isResumable)
        #expect(!ResumePolicy.entity(status: 200, header: headers(["ETag": "\"a\"", "Accept-Ranges": "none"])).isResumable)
    }

    /// Rule 2: a resume sends Range from the offset and If-Range with the validator.
    @Test func rangeHeaders() {
        let fields = ResumePolicy.rangeHeaders(offset: 500, validator: .etag("\"v1\""))
        #expect(fields == [HeaderField(name: "Range", value: "bytes=500-"), HeaderField(name: "If-Range", value: "\"v1\"")])
        #expect(ResumePolicy.rangeHeaders(offset: 0, validator: .etag("\"v1\"")).isEmpty)
    }

    /// Rule 3: a 206 that starts at the offset with the same total and validator is appended.
    @Test func matching206Appends() {
        let decision = ResumePolicy.decide(
            requestedOffset: 500, previous: previous, status: 206,
            header: headers(["Content-Range": "bytes 500-999/1000", "ETag": "\"v1\""]), url: "u")
        #expect(decision == .append(offset: 500))
    }

    /// Rule 4: a 200 to a range request restarts from zero; it is never appended.
    @Test func fullResponseRestarts() {
        let decision = ResumePolicy.decide(requestedOffset: 500, previous: previous, status: 200, header: headers([:]), url: "u")
        #expect(decision == .writeFromStart)
    }

    /// Rule 5: a 416, a Content-Range at another offset, another total, or another validator asks again without a range.
    @Test func mismatchesAskAgainWithoutRange() {
        let cases: [(Int, [String: String])] = [
            (416, ["Content-Range": "bytes */1000"]),
            (206, ["Content-Range": "bytes 400-999/1000"]),
            (206, ["Content-Range": "bytes 500-1999/2000"]),
            (206, ["Content-Range": "bytes 500-999/1000", "ETag": "\"v2\""]),
            (206, [:]),
        ]
        for (status, fields) in cases {
            let decision = ResumePolicy.decide(requestedOffset: 500, previous: previous, status: status, header: headers(fields), url: "u")
            guard case .requestAgainWithoutRange = decision else {
                Issue.record("\(status) \(fields) gave \(decision)")
                continue
            }
        }
    }

    /// Issue 25: the validator's own source is held to the same rule as a mirror: a 206 with no validator, a weak ETag, or only a date for an ETag download asks again without a range (the file starts over), never appends; a date download resumes only with the same date and a known length.
    @Test func ownSourceResumeNeedsTheSameValidator() {
        let range = ["Content-Range": "bytes 500-999/1000"]
        for fields in [range, range.merging(["ETag": "W/\"v1\""]) { $1 }, range.merging(["Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT"]) { $1 }] {
            let decision = ResumePolicy.decide(requestedOffset: 500, previous: previous, status: 206, header: headers(fields), url: "u")
            guard case .requestAgainWithoutRange = decision else {
                Issue.record("\(fields) gave \(decision)")
                continue
            }
        }
        let date = "Tue, 15 Nov 1994 12:45:26 GMT"
        let dated = ResumePolicy.Entity(validator: .lastModified(date), totalLength: 1000, isResumable: true)
        #expect(ResumePolicy.decide(
            requestedOffset: 500, previous: dated, status: 206, header: headers(range.merging(["Last-Modified": date]) { $1 }),
            url: "u") == .append(offset: 500))
        let undated = ResumePolicy.Entity(validator: .lastModified(date), totalLength: nil, isResumable: true)
        guard case .requestAgainWithoutRange = ResumePolicy.decide(
            requestedOffset: 500, previous: undated, status: 206, header: headers(range.merging(["Last-Modified": date]) { $1 }), url: "u")
        else {
            Issue.record("a date without a length was trusted")
            return
        }
        // A date alone, without a length, does not make the bytes resumable in the first place.
        #expect(!ResumePolicy.entity(status: 200, header: headers(["Last-Modified": date])).isResumable)
        #expect(ResumePolicy.entity(status: 200, header: headers(["Last-Modified": date, "Content-Length": "1000"])).isResumable)
    }

    /// From another URI than the validator's source (strict), a 206 is appended only with exactly the same strong validator: none, a weak ETag or another kind of validator asks again instead; a Last-Modified download takes the same date.
    @Test func mirrorResumeNeedsTheSameValidator() {
        let range = ["Content-Range": "bytes 500-999/1000"]
        for fields in [range, range.merging(["ETag": "W/\"v1\""]) { $1 }, range.merging(["Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT"]) { $1 }] {
            let decision = ResumePolicy.decide(requestedOffset: 500, previous: previous, status: 206, header: headers(fields), url: "m", strict: true)
            guard case .requestAgainWithoutRange = decision else {
                Issue.record("\(fields) gave \(decision)")
                continue
            }
        }
        #expect(ResumePolicy.decide(
            requestedOffset: 500, previous: previous, status: 206, header: headers(range.merging(["ETag": "\"v1\""]) { $1 }),
            url: "m", strict: true) == .append(offset: 500))
        let dated = ResumePolicy.Entity(validator: .lastModified("Tue, 15 Nov 1994 12:45:26 GMT"), totalLength: 1000, isResumable: true)
        #expect(ResumePolicy.provesSameFile(
            requestedOffset: 500, entity: dated, status: 206,
            header: headers(range.merging(["Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT", "ETag": "\"x\""]) { $1 })))
        #expect(!ResumePolicy.provesSameFile(
            requestedOffset: 500, entity: dated, status: 206, header: headers(range.merging(["Last-Modified": "Wed, 16 Nov 1994 12:45:26 GMT"]) { $1 })))
        #expect(!ResumePolicy.provesSameFile(requestedOffset: 500, entity: previous, status: 200, header: headers(["ETag": "\"v1\""])))
    }

    /// Error statuses fail with their status and Retry-After, and their body is never used.
    @Test func errorStatusesFail() {
        let decision = ResumePolicy.decide(requestedOffset: 0, previous: nil, status: 503, header: headers(["Retry-After": "7"]), url: "u")
        guard case .fail(let error) = decision else { Issue.record("not a failure"); return }
        #expect(error.code == .httpStatus)
        #expect(error.httpStatus == 503)
        #expect(error.retryAfter == .seconds(7))
        #expect(error.isTransient)
        guard case .fail(let notFound) = ResumePolicy.decide(requestedOffset: 0, previous: nil, status: 404, header: headers([:]), url: "u") else {
            Issue.record("404 accepted"); return
        }
        #expect(!notFound.isTransient)
    }

    /// Content-Range parsing accepts the standard forms and rejects malformed ones.
    @Test func contentRangeParsing() {
        #expect(ContentRange(parsing: "bytes 0-9/10") == ContentRange(parsing: "bytes 0-9/10"))
        #expect(ContentRange(parsing: "bytes 5-9/10")?.start == 5)
        #expect(ContentRange(parsing: "bytes 5-9/*")?.total == nil)
        #expect(ContentRange(parsing: "bytes 9-5/10") == nil)
        #expect(ContentRange(parsing: "bytes 5-10/10") == nil)
        #expect(ContentRange(parsing: "items 0-1/2") == nil)
        #expect(ContentRange(parsing: "bytes */10") == nil)
    }
}

@Suite("Retry policy")
struct RetryPolicyTests {
    /// Backoff doubles per attempt within the jitter band, and stops after maxRetries.
    @Test func exponentialBackoffWithJitter() {
        let policy = RetryPolicy(maxRetries: 3, baseDelay: .seconds(1), maxDelay: .seconds(30))
        let error = HaulError(.connectionFailed, "reset")
        #expect(policy.delay(after: error, nextAttempt: 2, jitter: 0) == .milliseconds(500))
        #expect(policy.delay(after: error, nextAttempt: 2, jitter: 0.999)! <= .seconds(1))
        #expect(policy.delay(after: error, nextAttempt: 3, jitter: 0) == .seconds(1))
        #expect(policy.delay(after: error, nextAttempt: 4, jitter: 0) == .seconds(2))
        #expect(policy.delay(after: error, nextAttempt: 5, jitter: 0) == nil)
    }

    /// Retry-After wins over the backoff but is capped; permanent errors are not retried.
    @Test func retryAfterAndPermanentErrors() {
        let policy = RetryPolicy(maxRetries: 3, maxRetryAfter: .seconds(60))
        #expect(policy.delay(after: HaulError(.httpStatus, "", httpStatus: 503, retryAfter: .seconds(7)), nextAttempt: 2, jitter: 0.5) == .seconds(7))
        #expect(policy.delay(after: HaulError(.httpStatus, "", httpStatus: 429, retryAfter: .seconds(9999)), nextAttempt: 2, jitter: 0.5) == .seconds(60))
        #expect(policy.delay(after: HaulError(.httpStatus, "", httpStatus: 404), nextAttempt: 2, jitter: 0.5) == nil)
        #expect(policy.delay(after: HaulError(.checksumMismatch, ""), nextAttempt: 2, jitter: 0.5) == nil)
    }

    /// Retry-After is read as seconds or as an HTTP date.
    @Test func parseRetryAfter() {
        #expect(RetryPolicy.parseRetryAfter("120") == .seconds(120))
        let now = HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")!
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
        #expect(RetryPolicy.parseRetryAfter("soon") == nil)
    }
}
