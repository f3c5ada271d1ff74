import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// A client of any daemon of a fleet sees the fleet (issue 29, "Clients see one service"):
/// two managers on one database of the test cluster, each on its own store as two daemons
/// would be. `a` claims and runs downloads; `b` is a fleet member that claims nothing (its
/// claim loop is not started), so everything that ends, ends on `a`.
@Suite("Clients of any daemon see the fleet", .timeLimit(.minutes(5)))
struct FleetClientViewTests {
    static func store(_ url: String) async throws -> PostgresStore {
        try await PostgresStore.open(address: try PostgresAddress(parsing: url), stateDirectory: nil, waitingUpTo: .zero)
    }

    static func member(_ url: String, claims: Bool, maxFinished: Int = 1_000) async throws -> DownloadManager {
        var configuration = RPCTest.fastConfiguration(maxConcurrent: 8)
        configuration.keepsEventOutbox = true
        configuration.retention = DownloadManager.Retention(maxFinished: maxFinished)
        configuration.fleet = FleetMembership(slots: 8, leaseDuration: .seconds(30), claimInterval: .milliseconds(200))
        let manager = DownloadManager(configuration: configuration, store: try await store(url), session: "fleet")
        try await manager.restore(continueInterrupted: true)
        if claims { await manager.startFleet() }
        return manager
    }

    static func rows(_ cluster: PostgresCluster, _ url: String, state: String) async throws -> String {
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        return try await cluster.psql("SELECT count(*) FROM haul.download WHERE state = '\(state)'", database: database)
    }

    /// Four downloads completed on `a` and one running there: `b`'s `tellStopped` lists the
    /// newest three of the finished (its `--max-download-result` is 3) in the order they were
    /// added, pages them forwards and backwards as aria2 does, and `getGlobalStat` counts
    /// them, and the running one, for the fleet.
    @Test func downloadsEndedOnAnotherDaemonAreListedAndCounted() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let out = try temporary.subdirectory("out")
            let a = try await Self.member(url, claims: true)
            let b = try await Self.member(url, claims: false, maxFinished: 3)
            let service = try Aria2Service(manager: b, configuration: Aria2Configuration(downloadDirectory: out) { _ in })
            let outcome: Result<Void, any Error>
            do {
                var ids: [DownloadID] = []
                for n in 0..<4 {
                    let request = DownloadRequest(url: URL(string: server.url("/file/f\(n).bin", ["size": "3000", "seed": "\(n + 1)"]))!, directory: out)
                    ids.append(try await a.add(request).id)
                    _ = try await a.finished(ids[n])
                }
                let slow = DownloadRequest(url: URL(string: server.url("/file/slow.bin", ["size": "400000", "seed": "9", "rate": "20000"]))!, directory: out)
                _ = try await a.add(slow)
                try await waitUntil("a's rows say four completed and one running", within: .seconds(60)) {
                    let completed = try await Self.rows(cluster, url, state: "completed")
                    let running = try await Self.rows(cluster, url, state: "running")
                    return completed == "4" && running == "1"
                }
                let gid = { (n: Int) in ids[n].description }
                let all = Aria2Fixture.gids(try await service.tellStopped(RPCParameters([0, 10])))
                #expect(all == [gid(1), gid(2), gid(3)], "the newest three, oldest first")
                #expect(Aria2Fixture.gids(try await service.tellStopped(RPCParameters([-1, 2]))) == [gid(3), gid(2)])
                #expect(Aria2Fixture.gids(try await service.tellStopped(RPCParameters([1, 1]))) == [gid(2)])
                #expect(Aria2Fixture.gids(try await service.tellStopped(RPCParameters([3, 1]))).isEmpty)
                let entry = try await service.tellStopped(RPCParameters([0, 1, ["status", "completedLength", "totalLength"]])).arrayValue?.first
                #expect(entry?["status"] == "complete" && entry?["completedLength"] == "3000" && entry?["totalLength"] == "3000")
                let stat = await service.getGlobalStat()
                #expect(stat["numStopped"] == "3" && stat["numStoppedTotal"] == "3")
                #expect(stat["numActive"] == "1" && stat["numWaiting"] == "0")
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            await a.shutdown()
            await b.shutdown()
            try outcome.get()
        }
    }

    /// A group added through `b` and run on `a`: `b`'s records of its members stay as `b`
    /// saw them (queued), yet a `haul.waitGroup` waiting on `b` returns once `a` completed the
    /// last member, woken by the store's notification (the fallback poll set to an hour), and
    /// its summary lists both members as completed with their files.
    @Test func aGroupCompletedOnAnotherDaemonAnswersAWaitHere() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let out = try temporary.subdirectory("out")
            let a = try await Self.member(url, claims: true)
            let b = try await Self.member(url, claims: false)
            b.storeChanges?.fallbackPollInterval = .seconds(3600)
            let outcome: Result<[DownloadInfo], any Error>
            do {
                let requests = (0..<2).map { n in
                    DownloadRequest(url: URL(string: server.url("/file/g\(n).bin", ["size": "200000", "seed": "\(n + 20)", "rate": "200000"]))!, directory: out)
                }
                let ids = try await b.addMembers(requests, toGroup: "g")
                let waiting = Task { try await b.waitForMembersInFleet(ofGroup: "g", knownFinished: -1, timeout: .seconds(120)) }
                try await waitUntil("a completed both members", within: .seconds(120)) {
                    try await Self.rows(cluster, url, state: "completed") == "2"
                }
                let started = ContinuousClock.now
                let members = try await waiting.value
                #expect(ContinuousClock.now - started < .seconds(30), "the wait returned on the notification, not at its end (120 s)")
                #expect(members.map(\.id) == ids)
                outcome = .success(members)
            } catch {
                outcome = .failure(error)
            }
            await a.shutdown()
            await b.shutdown()
            let members = try outcome.get()
            let summary = RemoteGroupSummary(name: "g", members: members).summary
            #expect(summary.isComplete)
            #expect(summary.completed.map(\.id) == members.map(\.id))
            #expect(summary.completed.allSatisfy { $0.file?.length == 200_000 })
        }
    }

    /// The dashboard's fleet panel on one daemon lists both daemons of the database, itself
    /// marked; on SQLite the list is empty.
    @Test func theDashboardListsTheDaemonsAlive() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        let a = try await PostgresDaemonPresence.start(store: try await Self.store(url), fleetID: "daemon-a", host: "host-a", pid: 101)
        let b = try await PostgresDaemonPresence.start(store: try await Self.store(url), fleetID: "daemon-b", host: "host-b", pid: 202)
        let answer = try await DashboardFleetMethods(presence: b).fleet()
        await a.stop()
        await b.stop()
        #expect(answer["self"] == "daemon-b")
        let daemons = answer["daemons"]?.arrayValue ?? []
        #expect(daemons.compactMap { $0["id"]?.stringValue } == ["daemon-a", "daemon-b"])
        #expect(daemons.compactMap { $0["host"]?.stringValue } == ["host-a", "host-b"])
        #expect(try await DashboardFleetMethods(presence: nil).fleet()["daemons"] == .array([]))
    }
}
