@testable import Haul
import Testing

@Suite("Segment response rules")
struct SegmentVerdictTests {
    let entity = ResumePolicy.Entity(validator: .etag("\"v1\""), totalLength: 1000, isResumable: true)

    func judge(_ status: Int, _ pairs: [String: String], start: Int64 = 500) -> ResumePolicy.SegmentVerdict {
        let lowered = Dictionary(uniqueKeysWithValues: pairs.map { ($0.key.lowercased(), $0.value) })
        return ResumePolicy.judgeSegment(requestedStart: start, entity: entity, status: status, header: { lowered[$0.lowercased()] }, url: "u")
    }

    /// A segment asks for a closed range with If-Range.
    @Test func closedRangeHeaders() {
        #expect(ResumePolicy.rangeHeaders(from: 500, to: 750, validator: .etag("\"v1\"")) == [
            HeaderField(name: "Range", value: "bytes=500-749"), HeaderField(name: "If-Range", value: "\"v1\""),
        ])
    }

    /// A 206 at the asked start with the same total and validator is used, even if it ends elsewhere.
    @Test func matchingPartialIsUsed() {
        #expect(judge(206, ["Content-Range": "bytes 500-749/1000", "ETag": "\"v1\""]) == .use)
        #expect(judge(206, ["Content-Range": "bytes 500-599/1000", "ETag": "\"v1\""]) == .use)
    }

    /// Another total, another validator, a 416, or a 200 with a new validator mean the file changed.
    @Test func changedFileIsRecognised() {
        let changed: [ResumePolicy.SegmentVerdict] = [
            judge(206, ["Content-Range": "bytes 500-749/1001", "ETag": "\"v1\""]),
            judge(206, ["Content-Range": "bytes 500-749/1000", "ETag": "\"v2\""]),
            judge(416, ["Content-Range": "bytes */400"]),
            judge(200, ["ETag": "\"v2\"", "Content-Length": "1000"]),
            judge(200, ["Content-Length": "1000"]),
        ]
        for verdict in changed {
            guard case .fileChanged = verdict else {
                Issue.record("expected fileChanged, got \(verdict)")
                continue
            }
        }
    }

    /// The same file without usable ranges (ignored, another start, no Content-Range, encoded) falls back to one connection.
    @Test func unusableRangesFallBack() {
        let unusable: [ResumePolicy.SegmentVerdict] = [
            judge(200, ["ETag": "\"v1\"", "Content-Length": "1000"]),
            judge(206, ["Content-Range": "bytes 400-749/1000", "ETag": "\"v1\""]),
            judge(206, ["ETag": "\"v1\""]),
            judge(206, ["Content-Range": "bytes 500-749/1000", "ETag": "\"v1\"", "Content-Encoding": "gzip"]),
        ]
        for verdict in unusable {
            guard case .rangesUnusable = verdict else {
                Issue.record("expected rangesUnusable, got \(verdict)")
                continue
            }
        }
    }

    /// From a mirror (strict), a 206 that does not send exactly the download's strong validator (none, a weak ETag, a Last-Modified only) means another file; one that sends it is used.
    @Test func mirrorMustSendTheSameValidator() {
        func strict(_ status: Int, _ pairs: [String: String]) -> ResumePolicy.SegmentVerdict {
            let lowered = Dictionary(uniqueKeysWithValues: pairs.map { ($0.key.lowercased(), $0.value) })
            return ResumePolicy.judgeSegment(
                requestedStart: 500, entity: entity, status: status, header: { lowered[$0.lowercased()] }, url: "m", strict: true)
        }
        #expect(strict(206, ["Content-Range": "bytes 500-749/1000", "ETag": "\"v1\""]) == .use)
        let unproven = [
            strict(206, ["Content-Range": "bytes 500-749/1000"]),
            strict(206, ["Content-Range": "bytes 500-749/1000", "ETag": "W/\"v1\""]),
            strict(206, ["Content-Range": "bytes 500-749/1000", "Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT"]),
            strict(200, ["Content-Length": "1000"]),
        ]
        for verdict in unproven {
            guard case .fileChanged = verdict else {
                Issue.record("expected fileChanged, got \(verdict)")
                continue
            }
        }
    }

    /// Issue 25: the validator's own source is held to the same rule as a mirror: a 206 with no validator, a weak ETag or only a date (for an ETag download) may be of a changed file, so the split stops as for a changed file; a date download's 206 needs the same date and length.
    @Test func ownSourceMustSendTheSameValidator() {
        let unproven = [
            judge(206, ["Content-Range": "bytes 500-749/1000"]),
            judge(206, ["Content-Range": "bytes 500-749/1000", "ETag": "W/\"v1\""]),
            judge(206, ["Content-Range": "bytes 500-749/1000", "Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT"]),
        ]
        for verdict in unproven {
            guard case .fileChanged = verdict else {
                Issue.record("expected fileChanged, got \(verdict)")
                continue
            }
        }
        let date = "Tue, 15 Nov 1994 12:45:26 GMT"
        let dated = ResumePolicy.Entity(validator: .lastModified(date), totalLength: 1000, isResumable: true)
        func judgeDated(_ pairs: [String: String]) -> ResumePolicy.SegmentVerdict {
            let lowered = Dictionary(uniqueKeysWithValues: pairs.map { ($0.key.lowercased(), $0.value) })
            return ResumePolicy.judgeSegment(requestedStart: 500, entity: dated, status: 206, header: { lowered[$0.lowercased()] }, url: "u")
        }
        #expect(judgeDated(["Content-Range": "bytes 500-749/1000", "Last-Modified": date]) == .use)
        guard case .fileChanged = judgeDated(["Content-Range": "bytes 500-749/1000"]) else {
            Issue.record("a range without the date was used")
            return
        }
    }

    /// An error status fails only this connection, keeping its status and Retry-After.
    @Test func errorStatusFailsTheConnection() {
        guard case .failed(let error) = judge(503, ["Retry-After": "2"]) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.httpStatus == 503)
        #expect(error.retryAfter == .seconds(2))
        #expect(error.isTransient)
    }
}
