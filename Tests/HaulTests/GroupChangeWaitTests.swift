import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// `waitForGroupChange`, the long poll behind a background session's group handles
/// (`haul.waitGroup`): it answers once more than `knownFinished` members have finished, or once
/// all have, from the group's counters, building the summary only then; holds of a group being
/// recorded count as unfinished without being members.
@Suite("Waiting for a group to change", .timeLimit(.minutes(2)))
struct GroupChangeWaitTests {
    /// Two quick members and two held ones: a wait for more than one finished answers with the
    /// quick ones, a wait for all answers only once the held ones were released.
    @Test func answersOnceEnoughMembersFinishedOrAllHave() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let quick = (0..<2).map { Support.request(server, "/file/q\($0).bin", ["size": "2000", "seed": "\($0)"], in: dir) }
            let held = (0..<2).map {
                Support.request(server, "/file/h\($0).bin", ["size": "40000", "seed": "\($0 + 5)", "hold": "1000", "key": "held"], in: dir)
            }
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let ids = try await manager.addContinuing(quick + held, toGroup: "g")
                let two = try await manager.waitForGroupChange("g", knownFinished: 1, timeout: .seconds(60))
                #expect(two.results.count == 2)
                #expect(Set(two.results.map(\.id)) == Set(ids.prefix(2)))
                #expect(!two.isComplete)

                // Nothing more can finish while the others are held: the wait ends at its timeout.
                let stillTwo = try await manager.waitForGroupChange("g", knownFinished: -1, timeout: .milliseconds(300))
                #expect(stillTwo.results.count == 2)
                #expect(!stillTwo.isComplete)

                server.release(key: "held")
                let all = try await manager.waitForGroupChange("g", knownFinished: -1, timeout: .seconds(60))
                #expect(all.isComplete)
                #expect(all.results.count == 4)
            }
        }
    }

    /// A held group (a live playlist being recorded) whose members have all finished: a wait
    /// for more than one finished answers at once. The hold is not a member that finished.
    @Test func aHoldIsNotCountedAsAFinishedMember() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let requests = (0..<2).map { Support.request(server, "/file/m\($0).bin", ["size": "2000", "seed": "\($0)"], in: dir) }
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                await manager.holdGroupOpen("live")
                let ids = try await manager.addContinuing(requests, toGroup: "live")
                for id in ids { _ = try await manager.finished(id) }
                let clock = ContinuousClock()
                let start = clock.now
                let summary = try await manager.waitForGroupChange("live", knownFinished: 1, timeout: .seconds(60))
                #expect(summary.results.count == 2)
                #expect(clock.now - start < .seconds(30), "answered at its timeout, not when the members had finished")
                await manager.releaseGroupHold("live")
                // Released twice: the second release changes nothing.
                await manager.releaseGroupHold("live")
                let done = try await manager.waitForGroupChange("live", knownFinished: -1, timeout: .seconds(60))
                #expect(done.isComplete)
                #expect(done.results.count == 2)
            }
        }
    }
}
