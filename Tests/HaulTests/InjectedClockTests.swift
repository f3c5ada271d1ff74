import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// The manager's timers sleep on the clock its configuration gives, so that a test can drive
/// long waits (retry backoff here) without waiting them out.
@Suite("Injected clock", .timeLimit(.minutes(3)))
struct InjectedClockTests {
    /// A clock whose long sleeps (over a second) return at once and are recorded; short ones
    /// (the progress ticker, write batching) really sleep, so nothing spins.
    struct SkippingClock: Clock {
        typealias Duration = Swift.Duration
        typealias Instant = ContinuousClock.Instant

        final class Skipped: @unchecked Sendable {
            private let lock = NSLock()
            private var sleeps: [Duration] = []
            func append(_ sleep: Duration) { lock.withLock { sleeps.append(sleep) } }
            var all: [Duration] { lock.withLock { sleeps } }
        }

        let skipped = Skipped()
        var now: Instant { ContinuousClock.now }
        var minimumResolution: Duration { .zero }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            let length = deadline - now
            guard length > .seconds(1) else {
                return try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
            }
            skipped.append(length)
            try Task.checkCancellation()
        }
    }

    /// A retry ten minutes away happens at once on the injected clock: the refused download
    /// makes its two attempts and fails well within the suite's minute.
    @Test func retryBackoffSleepsOnTheConfiguredClock() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        // Port 9 (discard) is not served on this machine's loopback.
        let request = DownloadRequest(url: URL(string: "http://127.0.0.1:9/x")!, directory: temporary.url)
        let clock = SkippingClock()
        var configuration = Support.fastConfiguration(retries: 1)
        configuration.retry = RetryPolicy(maxRetries: 1, baseDelay: .seconds(600), maxDelay: .seconds(600))
        configuration.clock = clock
        let info = try await Support.downloadOne(request, configuration: configuration)
        #expect(info.state == .failed)
        #expect(info.error?.code == .connectionFailed)
        let skipped = clock.skipped.all
        #expect(skipped.count == 1, "one retry wait: \(skipped)")
        #expect(skipped.allSatisfy { $0 > .seconds(250) && $0 <= .seconds(600) }, "\(skipped)")
    }
}
