import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A download waiting for a server that is gone gives up its slot: with one slot, a download
/// from a live server proceeds meanwhile, and the waiting one takes the next free slot once its
/// server is back.
@Suite("Waiting downloads give their slot back", .timeLimit(.minutes(3)))
struct WaitingSlotTests {
    /// One slot, no quick retries, waiting allowed for an hour, retries at most 100 ms apart.
    static func oneSlotWaiting() -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: 1)
        configuration.retry = RetryPolicy(
            maxRetries: 0, baseDelay: .milliseconds(20), maxDelay: .milliseconds(50), waitLimit: .seconds(3600),
            waitingMaxDelay: .milliseconds(100))
        return configuration
    }

    /// What the tests here share: a port that refuses connections until released, a
    /// directory, a live test server, and a manager (one slot, waiting allowed, by default).
    struct Scene {
        let reserved: ReservedPort
        let dir: URL
        let live: TestServer
        let manager: DownloadManager
        var port: Int { reserved.port }
    }

    static func withScene(configuration: DownloadManager.Configuration = oneSlotWaiting(), _ body: (Scene) async throws -> Void) async throws {
        // Held bound (connections refused) so that no other server of the run takes it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let dir = temporary.url
        try await withTestServer { live in
            try await withDownloadManager(configuration: configuration) { manager in
                try await body(Scene(reserved: reserved, dir: dir, live: live, manager: manager))
            }
        }
    }

    /// With one slot, adds a download from `deadPort` (refused), a live one throttled to run
    /// 4 s, and a small live one, and returns them once the throttled one holds the slot while
    /// the refused one waits for its server.
    static func deadRunningAndQueued(
        _ manager: DownloadManager, live: TestServer, deadPort: Int, in dir: URL, seed: Int
    ) async throws -> (dead: DownloadID, running: DownloadID, queued: DownloadID) {
        let dead = try await manager.enqueue(DownloadRequest(
            url: URL(string: "http://127.0.0.1:\(deadPort)/file/dead\(seed).bin")!, directory: dir, fileName: "dead\(seed).bin"))
        let running = try await manager.enqueue(Support.request(
            live, "/file/running\(seed).bin", ["size": "400000", "seed": "\(seed)", "rate": "100000"], in: dir, name: "running\(seed).bin"))
        let queued = try await manager.enqueue(Support.request(
            live, "/file/queued\(seed).bin", ["size": "100", "seed": "\(seed + 1)"], in: dir, name: "queued\(seed).bin"))
        try await waitUntil("the live download to run while the dead one waits", explaining: { await Support.downloadStates(manager) }) {
            let (deadNow, runningNow) = (await manager.snapshot(dead), await manager.snapshot(running))
            return runningNow?.state == .running && deadNow?.isWaitingToRetry == true
        }
        return (dead, running, queued)
    }

    /// With one slot, A (first in the queue) is refused by a port nothing listens on and waits;
    /// B, from a live server and throttled so that A's retries come due while it runs, completes
    /// meanwhile. A is shown queued and waiting (not active, not failed), ahead of the queue,
    /// and cannot be moved in it. Then A's server comes up on its port and A completes with the
    /// right bytes; the group completes with both.
    @Test func liveDownloadProceedsWhileADeadOneWaits() async throws {
        try await Self.withScene { scene in
            let (port, dir, live, manager) = (scene.port, scene.dir, scene.live, scene.manager)
            let dead = DownloadRequest(
                url: URL(string: "http://127.0.0.1:\(port)/file/a.bin?size=300000&seed=21")!, directory: dir, fileName: "a.bin")
            let alive = Support.request(live, "/file/b.bin", ["size": "400000", "seed": "22", "rate": "200000"], in: dir, name: "b.bin")
            let ids = try await manager.addMembers([dead, alive], toGroup: "g")
            let (a, b) = (ids[0], ids[1])
            let group = try await manager.group(named: "g")

            // Polled, not awaited: an engine that kept A in the slot would never start B,
            // and the test must fail rather than hang. While B runs (2 s) it holds the one
            // slot, so A, refused before B could start, can only be waiting without one.
            try await waitUntil("B to run while A waits", explaining: { await Support.downloadStates(manager) }) {
                let (aNow, bNow) = (await manager.snapshot(a), await manager.snapshot(b))
                return bNow?.state == .running && aNow?.state == .queued && aNow?.isWaitingToRetry == true
            }
            let aWaiting = try #require(await manager.snapshot(a))
            #expect(aWaiting.error?.code == .connectionFailed)
            let counts = await manager.stateCounts()
            #expect(counts.running == 1 && counts.queued == 1)
            #expect(await manager.waitingInQueueOrder() == [a])
            #expect(await manager.downloadIDs(inStates: [.running]) == [b])
            await #expect(throws: HaulError.self) { try await manager.moveInQueue(a, toIndex: 0) }

            try await waitUntil("B to finish while A waits", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(b)?.state.isTerminal == true }
            let bInfo = try await manager.finished(b)
            #expect(bInfo.state == .completed, "\(String(describing: bInfo.error))")
            #expect(Support.contents(dir.appendingPathComponent("b.bin")) == TestContent.bytes(seed: 22, size: 400_000))
            let aAfter = try #require(await manager.snapshot(a))
            #expect(aAfter.state != .failed)
            #expect(aAfter.attempts >= 2, "A's retries came due while B ran")

            scene.reserved.release()

            let server = try await TestServer.start(port: port)
            try await waitUntil("A to finish", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(a)?.state.isTerminal == true }
            let aInfo = try await manager.finished(a)
            try await server.shutdown()
            #expect(aInfo.state == .completed, "\(String(describing: aInfo.error))")
            #expect(!aInfo.isWaitingToRetry)
            #expect(Support.contents(dir.appendingPathComponent("a.bin")) == TestContent.bytes(seed: 21, size: 300_000))
            let summary = try await group.completion
            #expect(summary.completed.count == 2 && summary.failed.isEmpty)
        }
    }

    /// A waiting download can be paused (it keeps a place in the queue, at the front), resumed
    /// (it starts again from that place once a slot is free), and canceled; none of it takes
    /// a slot from the live download running meanwhile.
    @Test func pauseResumeAndCancelWhileWaiting() async throws {
        // Retries up to a second apart, not 100 ms: the test needs a moment when neither is
        // being tried, and in a full run on two loaded cores an attempt took longer than the
        // other's retry delay, so the one slot passed from one to the other without a gap.
        var configuration = Self.oneSlotWaiting()
        configuration.retry.waitingMaxDelay = .seconds(1)
        try await Self.withScene(configuration: configuration) { scene in
            let (port, dir, manager) = (scene.port, scene.dir, scene.manager)
            let first = try await manager.enqueue(DownloadRequest(
                url: URL(string: "http://127.0.0.1:\(port)/file/p.bin?size=1000&seed=1")!, directory: dir, fileName: "p.bin"))
            try await waitUntil("the first download to wait", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(first)?.isWaitingToRetry == true }
            let second = try await manager.enqueue(DownloadRequest(
                url: URL(string: "http://127.0.0.1:\(port)/file/q.bin?size=1000&seed=2")!, directory: dir, fileName: "q.bin"))
            // The second one got the slot the first gave back, and waits too.
            try await waitUntil("the second download to wait", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(second)?.isWaitingToRetry == true }
            // Each is tried now and then (and holds the slot for that moment); both are listed
            // whenever neither is being tried.
            try await waitUntil("both to wait without a slot", explaining: { await Support.downloadStates(manager) }) { Set(await manager.waitingInQueueOrder()) == [first, second] }

            try await manager.pause(first)
            #expect(await manager.snapshot(first)?.state == .paused)
            #expect(await manager.snapshot(first)?.isWaitingToRetry == false)
            #expect(await manager.waitingInQueueOrder().last == first, "paused, it has a place in the queue, behind the one waiting for its server")
            try await manager.cancel(second)
            #expect(await manager.snapshot(second)?.state == .canceled)
            #expect(await manager.waitingInQueueOrder() == [first])

            try await manager.resume(first)
            try await waitUntil("the resumed download to wait again", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(first)?.isWaitingToRetry == true }
            scene.reserved.release()
            let server = try await TestServer.start(port: port)
            try await waitUntil("the download to finish", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(first)?.state.isTerminal == true }
            let info = try await manager.finished(first)
            try await server.shutdown()
            #expect(info.state == .completed, "\(String(describing: info.error))")
            #expect(Support.contents(dir.appendingPathComponent("p.bin")) == TestContent.bytes(seed: 1, size: 1000))
        }
    }

    /// Changing the request of a waiting download: on the same server it keeps waiting, with
    /// the new request; moved to a live server, it is queued there and completes from it.
    @Test func changingTheRequestWhileWaiting() async throws {
        try await Self.withScene { scene in
            let (port, dir, live, manager) = (scene.port, scene.dir, scene.live, scene.manager)
            let id = try await manager.enqueue(DownloadRequest(
                url: URL(string: "http://127.0.0.1:\(port)/file/old.bin?size=1000&seed=3")!, directory: dir, fileName: "c.bin"))
            try await waitUntil("the download to wait", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(id)?.isWaitingToRetry == true }
            let sameServer = DownloadRequest(
                url: URL(string: "http://127.0.0.1:\(port)/file/new.bin?size=1000&seed=4")!, directory: dir, fileName: "c.bin")
            try await manager.replaceRequest(id, with: sameServer)
            let changed = try #require(await manager.snapshot(id))
            #expect(changed.state == .queued && changed.isWaitingToRetry)
            #expect(changed.request.url == sameServer.url)

            let moved = Support.request(live, "/file/moved.bin", ["size": "2000", "seed": "5"], in: dir, name: "c.bin")
            try await manager.replaceRequest(id, with: moved)
            try await waitUntil("the moved download to finish", explaining: { await Support.downloadStates(manager) }) { await manager.snapshot(id)?.state.isTerminal == true }
            let info = try #require(await manager.snapshot(id))
            #expect(info.state == .completed, "\(String(describing: info.error))")
            #expect(Support.contents(dir.appendingPathComponent("c.bin")) == TestContent.bytes(seed: 5, size: 2000))
        }
    }

    /// `pauseAll` with one download waiting for its server and one running: both ran, so both
    /// go to the front of the queue, in the order they were added, before the queued one.
    @Test func pauseAllPutsWaitingAndRunningFirstInAddedOrder() async throws {
        try await Self.withScene { scene in
            let (port, dir, live, manager) = (scene.port, scene.dir, scene.live, scene.manager)
            let (dead, slow, last) = try await Self.deadRunningAndQueued(manager, live: live, deadPort: port, in: dir, seed: 6)
            await manager.pauseAll()
            #expect(await manager.waitingInQueueOrder() == [dead, slow, last])
            for id in [dead, slow, last] { #expect(await manager.snapshot(id)?.state == .paused) }
        }
    }

    /// With groups one after another, `pauseAll` while the first group's download waits for its
    /// server: pausing it ends the first group, yet the next group's queued download is paused
    /// without ever being started on the way.
    @Test func pauseAllStartsNothingOfTheNextGroup() async throws {
        var configuration = Self.oneSlotWaiting()
        configuration.groupOrder = .sequential
        try await Self.withScene(configuration: configuration) { scene in
            let (dir, live, manager) = (scene.dir, scene.live, scene.manager)
            let dead = try await manager.addMembers([DownloadRequest(
                url: URL(string: "http://127.0.0.1:\(scene.reserved.port)/file/g.bin")!, directory: dir, fileName: "g.bin")], toGroup: "first")[0]
            let next = try await manager.addMembers(
                [Support.request(live, "/file/n.bin", ["size": "100", "seed": "10"], in: dir, name: "n.bin")], toGroup: "second")[0]
            try await waitUntil("the first group's download to wait for its server", explaining: { await Support.downloadStates(manager) }) {
                await manager.snapshot(dead)?.isWaitingToRetry == true
            }
            #expect(await manager.snapshot(next)?.attempts == 0, "the next group waits for the first")
            await manager.pauseAll()
            let after = try #require(await manager.snapshot(next))
            #expect(after.state == .paused)
            #expect(after.attempts == 0, "the next group's download was started during pauseAll")
            #expect(await manager.snapshot(dead)?.state == .paused)
        }
    }

    /// The client's "force quit" (`invalidateAndCancel`) treats a download waiting for its
    /// server as one that ran: paused with what it has kept, not canceled and not left waiting,
    /// like the running one; the one that never started is canceled.
    @Test func invalidateAndCancelPausesAWaitingDownload() async throws {
        try await Self.withScene { scene in
            let (port, dir, live, manager) = (scene.port, scene.dir, scene.live, scene.manager)
            let (waiting, running, queued) = try await Self.deadRunningAndQueued(manager, live: live, deadPort: port, in: dir, seed: 8)
            await manager.invalidateAndCancel()
            #expect(await manager.snapshot(waiting)?.state == .paused)
            #expect(await manager.snapshot(running)?.state == .paused)
            #expect(await manager.snapshot(queued)?.state == .canceled)
        }
    }
}
