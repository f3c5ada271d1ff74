import Foundation
import Testing
@testable import Haul

/// The waiting phase of the retry policy, without I/O: after the quick retries a transient
/// failure waits with a backoff capped near a minute until the resource deadline; then, and on
/// any permanent error, the download fails.
@Suite("Retry policy: waiting")
struct RetryWaitingTests {
    let added = Date(timeIntervalSince1970: 1_000_000)
    let refused = HaulError(.connectionFailed, "127.0.0.1:8080: connection refused")

    /// Without a wait limit, nothing changes: the quick retries, then failure with the attempt's error.
    @Test func noWaitingByDefault() {
        let policy = RetryPolicy(maxRetries: 2)
        #expect(!policy.waits)
        #expect(policy.decide(after: refused, nextAttempt: 3, addedAt: added, now: added, jitter: 0) == .retry(after: .seconds(1), waiting: false))
        #expect(policy.decide(after: refused, nextAttempt: 4, addedAt: added, now: added, jitter: 0) == .fail(refused))
    }

    /// With a limit, the attempts after the quick ones wait, with the backoff growing to the
    /// waiting cap (60 s by default), and never past the deadline.
    @Test func waitsWithCappedBackoffUntilTheDeadline() {
        let policy = RetryPolicy(maxRetries: 1, waitLimit: .seconds(3600))
        let now = added.addingTimeInterval(10)
        #expect(policy.decide(after: refused, nextAttempt: 2, addedAt: added, now: now, jitter: 0.999) == .retry(after: .milliseconds(999), waiting: false))
        #expect(policy.decide(after: refused, nextAttempt: 3, addedAt: added, now: now, jitter: 0) == .retry(after: .seconds(1), waiting: true))
        // 2^20 s would be twelve days: capped at 60 s (between 30 and 60 with jitter).
        #expect(policy.decide(after: refused, nextAttempt: 22, addedAt: added, now: now, jitter: 0.999).delay ?? .zero <= .seconds(60))
        #expect(policy.decide(after: refused, nextAttempt: 22, addedAt: added, now: now, jitter: 0).delay == .seconds(30))
        #expect(policy.decide(after: refused, nextAttempt: 1_000_000, addedAt: added, now: now, jitter: 0).delay == .seconds(30))
        // Five seconds before the deadline: one more try, at the deadline, not after it.
        let late = added.addingTimeInterval(3595)
        #expect(policy.decide(after: refused, nextAttempt: 30, addedAt: added, now: late, jitter: 0) == .retry(after: .seconds(5), waiting: true))
        #expect(policy.isWaiting(beforeAttempt: 3))
        #expect(!policy.isWaiting(beforeAttempt: 2))
    }

    /// Past the deadline the download fails with `.deadlineExceeded`, naming the last error.
    @Test func deadlinePassedFails() throws {
        let policy = RetryPolicy(maxRetries: 0, waitLimit: .seconds(60))
        let decision = policy.decide(after: refused, nextAttempt: 9, addedAt: added, now: added.addingTimeInterval(61), jitter: 0)
        guard case .fail(let error) = decision else { Issue.record("expected a failure, got \(decision)"); return }
        #expect(error.code == .deadlineExceeded)
        #expect(error.message.contains("gave up waiting"))
        #expect(error.message.contains("1 min 1 s after the download was added"))
        #expect(error.message.contains("connection refused"))
        #expect(!error.isTransient)
    }

    /// A fixed deadline (`haul get --retry-until`) and a limit from when the download was added:
    /// the earlier one holds.
    @Test func earlierDeadlineHolds() {
        let fixed = added.addingTimeInterval(100)
        #expect(RetryPolicy(waitLimit: .seconds(50), waitDeadline: fixed).deadline(addedAt: added) == added.addingTimeInterval(50))
        #expect(RetryPolicy(waitLimit: .seconds(500), waitDeadline: fixed).deadline(addedAt: added) == fixed)
        #expect(RetryPolicy(waitDeadline: fixed).deadline(addedAt: added) == fixed)
        #expect(RetryPolicy().deadline(addedAt: added) == nil)
        #expect(RetryPolicy.background.waitLimit == .seconds(7 * 24 * 3600))
    }

    /// Nothing waits on a permanent error: a 404, a checksum mismatch, a certificate error.
    @Test func permanentErrorsNeverWait() {
        let policy = RetryPolicy(maxRetries: 0, waitDeadline: .distantFuture)
        for error in [
            HaulError(.httpStatus, "404", httpStatus: 404), HaulError(.checksumMismatch, "bad"),
            HaulError(.certificate, "untrusted"),
        ] {
            #expect(policy.decide(after: error, nextAttempt: 5, addedAt: added, now: added, jitter: 0) == .fail(error))
        }
        // The statuses that mean "not now" wait.
        for status in [429, 503] {
            let error = HaulError(.httpStatus, "\(status)", httpStatus: status)
            #expect(policy.decide(after: error, nextAttempt: 5, addedAt: added, now: added, jitter: 0).delay != nil)
        }
    }
}
