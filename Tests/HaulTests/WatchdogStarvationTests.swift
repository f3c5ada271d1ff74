import Foundation
@testable import Haul
import Testing

/// The read-timeout watchdog does not count time the process itself was not running (a late
/// tick: a suspended machine, or one starved by other work) as silence from the server.
@Suite("Watchdog and a process that was not running")
struct WatchdogStarvationTests {
    let interval: Duration = .milliseconds(250)

    /// On time, or late by up to a second, is no starvation; later than that, the lateness is.
    @Test func lateTickIsStarvation() {
        let start = ContinuousClock.now
        #expect(DownloadManager.starvation(previousTick: nil, now: start, interval: interval) == nil)
        #expect(DownloadManager.starvation(previousTick: start, now: start + .milliseconds(250), interval: interval) == nil)
        #expect(DownloadManager.starvation(previousTick: start, now: start + .milliseconds(1250), interval: interval) == nil)
        #expect(DownloadManager.starvation(previousTick: start, now: start + .seconds(3), interval: interval) == .milliseconds(2750))
    }

    /// A span excused moves the silence clock on: a transfer silent for 3 s of which 2 s the
    /// process was not running is not timed out at a 2 s limit, and is once the server stays
    /// silent for another 2 s. The clock never moves past now.
    @Test func excusedSpanIsNotSilence() {
        let live = LiveTransfer()
        live.attemptStarted()
        let heard = ContinuousClock.now
        live.excuseSilence(.seconds(2), now: heard + .seconds(3))
        #expect(!live.timeOutIfSilent(longerThan: .seconds(2), now: heard + .seconds(3)))
        #expect(live.timeOutIfSilent(longerThan: .seconds(2), now: heard + .milliseconds(5100)))
        #expect(live.timedOut)

        let other = LiveTransfer()
        other.attemptStarted()
        let now = ContinuousClock.now
        other.excuseSilence(.seconds(60), now: now)
        #expect(other.timeOutIfSilent(longerThan: .seconds(2), now: now + .milliseconds(2100)))
    }

    /// A timeout declared while an attempt waited for a worker of the lane stands when the
    /// runner begins it (the attempt then ends as a timeout, never as a stop nobody asked
    /// for); the next attempt submitted starts without one.
    @Test func timeoutBeforeTheRunnerBeganStands() {
        let live = LiveTransfer()
        live.attemptStarted()
        #expect(live.timeOutIfSilent(longerThan: .seconds(2), now: ContinuousClock.now + .seconds(3)))
        live.runnerBegan()
        #expect(live.timedOut)
        live.attemptStarted()
        #expect(!live.timedOut)
    }
}
