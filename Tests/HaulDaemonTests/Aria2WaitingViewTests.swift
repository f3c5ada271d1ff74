import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestSupport
import Testing

/// aria2's views of a download waiting for its server without a slot: `waiting` everywhere,
/// never counted or listed as active, so that the lists and the totals agree.
@Suite(.timeLimit(.minutes(3))) struct Aria2WaitingViewTests {
    /// With one slot, a download whose server refuses connections waits and gives its slot to
    /// a throttled live one: `tellStatus` says `waiting` with the reason, `tellWaiting` lists it
    /// and `tellActive` does not, `getGlobalStat` counts it in `numWaiting`, not `numActive`, and
    /// `changePosition` refuses to move it (it goes before the queue when due).
    @Test func waitingDownloadIsWaitingNotActive() async throws {
        let retry = RetryPolicy(
            maxRetries: 0, baseDelay: .milliseconds(20), maxDelay: .milliseconds(50), waitLimit: .seconds(3600),
            waitingMaxDelay: .milliseconds(100))
        try await Aria2Fixture.run(maxConcurrent: 1, retry: retry) { f in
            // Held bound (connections refused) so that no other server of the run takes it.
            let reserved = try ReservedPort()
            defer { reserved.release() }
            let dead = try await f.add("http://127.0.0.1:\(reserved.port)/file/dead.bin")
            let live = try await f.add(f.url("live.bin", size: 400_000, seed: 4, rate: 200_000))
            try await waitUntil("the live download to run while the dead one waits") {
                let deadStatus = try await f.status(dead, ["status", "errorMessage"])
                let liveStatus = try await f.status(live, ["status"])
                return deadStatus["status"] == "waiting" && deadStatus["errorMessage"]?.stringValue?.contains("connection refused") == true
                    && liveStatus["status"] == "active"
            }
            #expect(Aria2Fixture.gids(try await f.client.result("aria2.tellActive")) == [live])
            #expect(Aria2Fixture.gids(try await f.client.result("aria2.tellWaiting", [0, 10])) == [dead])
            let stat = try await f.client.result("aria2.getGlobalStat")
            #expect(stat["numActive"] == "1")
            #expect(stat["numWaiting"] == "1")
            let move = try await f.client.error("aria2.changePosition", [.string(dead), 0, "POS_SET"])
            #expect(move.message.contains("waiting for its server"), "\(move.message)")
            try await f.finished(live)
            #expect(try await f.status(live, ["status"])["status"] == "complete")
            // Once the live one is done it is still waiting for its server (or trying it), not failed.
            #expect(try await f.status(dead, ["status"])["status"] != "error")
        }
    }
}
