import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// A download's own resource deadline (`DownloadRequest.waitDeadline`): how it decides, how it
/// is written in JSON and in the store, and what it does to a download of a session that waits.
@Suite("A download's own wait deadline", .timeLimit(.minutes(3)))
struct RequestWaitDeadlineTests {
    let added = Date(timeIntervalSince1970: 1_000_000)
    let refused = HaulError(.connectionFailed, "127.0.0.1:9: connection refused")

    /// The request's deadline replaces the policy's, earlier or later, and makes a download
    /// wait under a policy that does not; past it the download fails with `.deadlineExceeded`.
    @Test func replacesThePolicysDeadline() throws {
        let waiting = RetryPolicy(maxRetries: 0, waitLimit: .seconds(3600))
        let soon = added.addingTimeInterval(10)
        let now = added.addingTimeInterval(5)
        // Earlier than the policy's hour: one more try at most 5 s away, at the deadline.
        #expect(waiting.decide(after: refused, nextAttempt: 9, addedAt: added, requestDeadline: soon, now: now, jitter: 0)
            == .retry(after: .seconds(5), waiting: true))
        let late = added.addingTimeInterval(11)
        let failed = waiting.decide(after: refused, nextAttempt: 9, addedAt: added, requestDeadline: soon, now: late, jitter: 0)
        guard case .fail(let error) = failed else { Issue.record("expected a failure, got \(failed)"); return }
        #expect(error.code == .deadlineExceeded)
        #expect(error.message.contains("connection refused"))
        // Later than the policy's: it still waits past the hour.
        let twoHours = added.addingTimeInterval(7200)
        #expect(waiting.decide(
            after: refused, nextAttempt: 9, addedAt: added, requestDeadline: twoHours, now: added.addingTimeInterval(3700), jitter: 0
        ).isWaiting)
        // A policy that fails fast waits for a download that has a deadline of its own.
        let failFast = RetryPolicy(maxRetries: 0)
        #expect(failFast.decide(after: refused, nextAttempt: 2, addedAt: added, now: now, jitter: 0) == .fail(refused))
        #expect(failFast.decide(after: refused, nextAttempt: 2, addedAt: added, requestDeadline: soon, now: now, jitter: 0).isWaiting)
        // A permanent error never waits, deadline or not.
        let notFound = HaulError(.httpStatus, "404", httpStatus: 404)
        #expect(failFast.decide(after: notFound, nextAttempt: 2, addedAt: added, requestDeadline: soon, now: now, jitter: 0) == .fail(notFound))
    }

    /// In JSON the deadline is an ISO 8601 date; it round-trips (to the millisecond), a JSON
    /// without it decodes to none, and text that is not a date is refused, naming the field.
    @Test func jsonForm() throws {
        let deadline = Date(timeIntervalSince1970: 1_795_000_000.25)
        let request = DownloadRequest(
            url: URL(string: "https://example.com/a.iso")!, directory: URL(fileURLWithPath: "/tmp"), waitDeadline: deadline)
        let data = try JSONEncoder().encode(request)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["waitDeadline"] as? String == "2026-11-18T11:06:40.250Z")
        #expect(try JSONDecoder().decode(DownloadRequest.self, from: data) == request)
        let hand = #"{"url":"https://example.com/a","directory":"file:///tmp/","headers":[],"checksums":[],"priority":0,"conflictPolicy":"rename","metadata":{},"#
        let withOffset = try JSONDecoder().decode(DownloadRequest.self, from: Data((hand + #""waitDeadline":"2026-12-01T20:00:00+02:00"}"#).utf8))
        #expect(withOffset.waitDeadline == Date(timeIntervalSince1970: 1_796_148_000))
        #expect(try JSONDecoder().decode(DownloadRequest.self, from: Data((hand.dropLast() + "}").utf8)).waitDeadline == nil)
        #expect(DecodingValidationTests.refuses(DownloadRequest.self, hand + #""waitDeadline":"tomorrow"}"#, "not an ISO 8601 date"))
        #expect(DecodingValidationTests.refuses(DownloadRequest.self, hand + #""waitDeadline":"2026-13-01T00:00:00Z"}"#, "not an ISO 8601 date"))
    }

    /// The store keeps the deadline exactly (a paused download found again by a new manager).
    @Test func keptByTheStore() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let state = try temporary.subdirectory("state")
        let dir = try temporary.subdirectory("dir")
        let deadline = Date(timeIntervalSinceReferenceDate: 817_000_000.123456)
        let request = DownloadRequest(url: URL(string: "http://127.0.0.1:9/k.bin")!, directory: dir, waitDeadline: deadline)
        let id = try await withDownloadManager(stateDirectory: state) { manager in
            try await manager.add(request, queueIndex: nil, paused: true)
        }
        try await withDownloadManager(stateDirectory: state) { manager in
            #expect(await manager.snapshot(id)?.request.waitDeadline == deadline)
        }
    }

    /// In a session that waits for an hour, a download whose own deadline passes fails with
    /// `.deadlineExceeded`, while another of the same session without one keeps waiting.
    @Test func aPassedDeadlineFailsOnlyItsDownload() async throws {
        // Held bound (connections refused) so that no other server of the run takes it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let port = reserved.port
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        var configuration = Support.fastConfiguration(maxConcurrent: 1)
        configuration.retry = RetryPolicy(
            maxRetries: 0, baseDelay: .milliseconds(20), maxDelay: .milliseconds(50), waitLimit: .seconds(3600),
            waitingMaxDelay: .milliseconds(100))
        try await withDownloadManager(configuration: configuration) { manager in
            let url = { (name: String) in URL(string: "http://127.0.0.1:\(port)/file/\(name)")! }
            let keeps = try await manager.enqueue(DownloadRequest(url: url("keeps.bin"), directory: dir))
            let short = try await manager.enqueue(DownloadRequest(
                url: url("short.bin"), directory: dir, waitDeadline: Date().addingTimeInterval(1)))
            try await waitUntil("the download with a deadline to fail", explaining: { await Support.downloadStates(manager) }) {
                await manager.snapshot(short)?.state == .failed
            }
            let failed = try #require(await manager.snapshot(short))
            #expect(failed.error?.code == .deadlineExceeded)
            #expect(failed.error?.message.contains("gave up waiting") == true)
            #expect(failed.error?.message.contains("connection refused") == true)
            // The other is tried now and then (holding the slot for that moment) and waits between.
            try await waitUntil("the other to be waiting", explaining: { await Support.downloadStates(manager) }) {
                let other = await manager.snapshot(keeps)
                return other?.state == .queued && other?.isWaitingToRetry == true
            }
            let waiting = try #require(await manager.snapshot(keeps))
            #expect(waiting.error?.code == .connectionFailed)
        }
    }
}
