import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A client of any daemon of a fleet sees the fleet (issue 29, "Clients see one service"):
/// two managers on one database of the test cluster, each on its own store as two daemons
/// would be. `a` claims and runs downloads; `b` is a fleet member that claims nothing (its
/// claim loop is not started), so everything that ends, ends on `a`.
@Suite("Clients of any daemon see the fleet", .timeLimit(.minutes(5)))
struct FleetClientViewTests {
    static func store(_ url: String) async throws -> PostgresStore {
        try await PostgresStore.open(address: try PostgresAddress(parsing: url), stateDirectory: nil, waitingUpTo: .zero)
    }

    static func member(_ url: String, claims: Bool, maxFinished: Int = 1_000, slots: Int = 8) async throws -> DownloadManager {
        var configuration = RPCTest.fastConfiguration(maxConcurrent: 8)
        configuration.keepsEventOutbox = true
        configuration.retention = DownloadManager.Retention(maxFinished: maxFinished)
        configuration.fleet = FleetMembership(slots: slots, leaseDuration: .seconds(30), claimInterval: .milliseconds(200))
        let manager = DownloadManager(configuration: configuration, store: try await store(url), session: "fleet")
        try await manager.restore(continueInterrupted: true)
        if claims { await manager.startFleet() }
        return manager
    }

    /// Runs `body` with `a` (claiming, `aSlots` slots) and `b` (claiming nothing, keeping
    /// `bMaxFinished` finished downloads) on `url`, and shuts both down however it ends.
    static func withMembers<Value>(
        _ url: String, aSlots: Int = 8, bMaxFinished: Int = 1_000,
        _ body: (_ a: DownloadManager, _ b: DownloadManager) async throws -> Value
    ) async throws -> Value {
        let a = try await member(url, claims: true, slots: aSlots)
        let b: DownloadManager
        do {
            b = try await member(url, claims: false, maxFinished: bMaxFinished)
        } catch {
            await a.shutdown()
            throw error
        }
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await body(a, b))
        } catch {
            outcome = .failure(error)
        }
        await a.shutdown()
        await b.shutdown()
        return try outcome.get()
    }

    /// What a test of two members runs against: the test server, an output directory, and
    /// the test cluster's new database (`url`) the members share.
    struct Scene {
        let server: TestServer
        let out: URL
        let cluster: PostgresCluster
        let url: String
    }

    /// `withMembers` on a new database of the test cluster, with the test server and an
    /// output directory (removed afterwards).
    static func withMembersServing<Value>(
        aSlots: Int = 8, bMaxFinished: Int = 1_000,
        _ body: (_ a: DownloadManager, _ b: DownloadManager, _ scene: Scene) async throws -> Value
    ) async throws -> Value {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        return try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let scene = Scene(server: server, out: try temporary.subdirectory("out"), cluster: cluster, url: url)
            return try await withMembers(url, aSlots: aSlots, bMaxFinished: bMaxFinished) { a, b in try await body(a, b, scene) }
        }
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
        try await Self.withMembersServing(bMaxFinished: 3) { a, b, scene in
            let (server, out, cluster, url) = (scene.server, scene.out, scene.cluster, scene.url)
            let service = try Aria2Service(manager: b, configuration: Aria2Configuration(downloadDirectory: out) { _ in })
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
        }
    }

    /// Three downloads completed on `a`: aria2's `removeDownloadResult` of one through `b`,
    /// then `purgeDownloadResult` through `b`, forget them for the fleet: both daemons'
    /// `tellStopped` and `getGlobalStat` show two, then none, no finished row is left, and `a`
    /// has dropped its own records of them. Before, `b` answered that it could not remove a
    /// result it listed, and its purge left `a`'s results listed on both daemons.
    @Test func resultsAreForgottenThroughAnyDaemon() async throws {
        try await Self.withMembersServing { a, b, scene in
            let (server, out, cluster, url) = (scene.server, scene.out, scene.cluster, scene.url)
            var ids: [DownloadID] = []
            for n in 0..<3 {
                let request = DownloadRequest(url: URL(string: server.url("/file/r\(n).bin", ["size": "3000", "seed": "\(n + 90)"]))!, directory: out)
                ids.append(try await a.add(request).id)
                _ = try await a.finished(ids[n])
            }
            try await waitUntil("three completed rows", within: .seconds(60)) {
                try await Self.rows(cluster, url, state: "completed") == "3"
            }
            let services = try [a, b].map { try Aria2Service(manager: $0, configuration: Aria2Configuration(downloadDirectory: out) { _ in }) }
            func stopped(_ service: Aria2Service) async throws -> Set<String> {
                Set(Aria2Fixture.gids(try await service.tellStopped(RPCParameters([0, 10]))))
            }
            for service in services { #expect(try await stopped(service).count == 3) }
            #expect(try await services[1].removeDownloadResult(RPCParameters([.string(ids[0].description)])) == "OK")
            for service in services {
                #expect(try await stopped(service) == Set(ids[1...].map(\.description)))
                #expect(await service.getGlobalStat()["numStopped"] == "2")
            }
            #expect(try await services[1].purgeDownloadResult() == "OK")
            for service in services {
                #expect(try await stopped(service).isEmpty)
                #expect(await service.getGlobalStat()["numStopped"] == "0")
            }
            #expect(try await Self.rows(cluster, url, state: "completed") == "0")
            #expect(await a.downloads().isEmpty)
        }
    }

    /// A fleet member with one slot runs one slow download of four it was given; the three it
    /// has not claimed are in no daemon's queue yet. Its own `tellWaiting` lists them (from
    /// their rows) and `getGlobalStat` counts them, as on the other daemon: before, a daemon
    /// showed only the downloads it held, so its own unclaimed ones were listed nowhere.
    @Test func unclaimedDownloadsAreListedWaitingOnEveryDaemon() async throws {
        try await Self.withMembersServing(aSlots: 1) { a, b, scene in
            let (server, out, cluster, url) = (scene.server, scene.out, scene.cluster, scene.url)
            var ids: [DownloadID] = []
            for n in 0..<4 {
                let request = DownloadRequest(url: URL(string: server.url("/file/w\(n).bin", ["size": "400000", "seed": "\(n + 50)", "rate": "10000"]))!, directory: out)
                ids.append(try await a.add(request).id)
            }
            try await waitUntil("one running row, three queued", within: .seconds(60)) {
                let running = try await Self.rows(cluster, url, state: "running")
                let queued = try await Self.rows(cluster, url, state: "queued")
                return running == "1" && queued == "3"
            }
            for manager in [a, b] {
                let service = try Aria2Service(manager: manager, configuration: Aria2Configuration(downloadDirectory: out) { _ in })
                let active = Aria2Fixture.gids(try await service.tellActive(RPCParameters([])))
                let waiting = Aria2Fixture.gids(try await service.tellWaiting(RPCParameters([0, 10])))
                #expect(active.count == 1 && waiting.count == 3, "active \(active), waiting \(waiting)")
                #expect(Set(active + waiting) == Set(ids.map(\.description)))
                let stat = await service.getGlobalStat()
                #expect(stat["numActive"] == "1" && stat["numWaiting"] == "3", "\(stat)")
            }
        }
    }

    /// A group added through `b` and run on `a`: `b`'s records of its members stay as `b`
    /// saw them (queued), yet a `haul.waitGroup` waiting on `b` returns once `a` completed the
    /// last member, woken by the store's notification (the fallback poll set to an hour), and
    /// its summary lists both members as completed with their files.
    @Test func aGroupCompletedOnAnotherDaemonAnswersAWaitHere() async throws {
        let members = try await Self.withMembersServing { a, b, scene in
            let (server, out, cluster, url) = (scene.server, scene.out, scene.cluster, scene.url)
            b.storeChanges?.fallbackPollInterval = .seconds(3600)
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
            return members
        }
        let summary = RemoteGroupSummary(name: "g", members: members).summary
        #expect(summary.isComplete)
        #expect(summary.completed.map(\.id) == members.map(\.id))
        #expect(summary.completed.allSatisfy { $0.file?.length == 200_000 })
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

    /// The daemons' own view of each other, as `haul.fleet` answers it.
    struct FleetAnswer: Decodable {
        struct Daemon: Decodable { var id: String }
        var me: String?
        enum CodingKeys: String, CodingKey { case me = "self", daemons }
        var daemons: [Daemon]
    }

    /// What `haul.overview` answers, as far as these tests read it.
    struct OverviewAnswer: Decodable {
        struct Download: Decodable { var id: String }
        var total: Int
        var states: [String: Int]
        var downloads: [Download]
    }

    /// Two real daemons on one database: four downloads added through `a` run on whichever
    /// claims them; each daemon's `tellStopped` (what the dashboard's Stopped tab reads) lists
    /// all four and its `getGlobalStat` counts them, the dashboard's `haul.overview` counts and
    /// lists them, and `haul.fleet` on `b` lists both daemons. Before, a daemon listed only
    /// what it ran (the one that ran none, nothing), and its overview counted its own memory.
    @Test func twoDaemonsListEveryFinishedDownloadAndEachOther() async throws {
        let store = try await PostgresCluster.shared().makeDatabase()
        try await withTestServer { server in
            let workspace = try DaemonWorkspace()
            defer { workspace.remove() }
            let sockets = ["a", "b"].map { workspace.root.appendingPathComponent("\($0).sock").path }
            let states = ["a", "b"].map { workspace.root.appendingPathComponent("\($0)-state") }
            let a = try await PostgresDaemonTests.startDaemon(socket: sockets[0], state: states[0], out: workspace.out, store: store)
            let b: LineProcess
            do {
                b = try await PostgresDaemonTests.startDaemon(socket: sockets[1], state: states[1], out: workspace.out, store: store)
            } catch {
                a.send(SIGTERM)
                _ = await a.waitForExit()
                throw error
            }
            let outcome: Result<Void, any Error>
            do {
                try await withRPCClient(endpoint: .unixSocket(path: sockets[0])) { onA in
                    try await withRPCClient(endpoint: .unixSocket(path: sockets[1])) { onB in
                        var gids: Set<String> = []
                        for n in 0..<4 {
                            let url = server.url("/file/d\(n).bin", ["size": "5000", "seed": "\(n + 30)"])
                            gids.insert(try await onA.call("aria2.addUri", [url], returning: String.self))
                        }
                        let clients = [onA, onB]
                        var listed: [Set<String>] = [[], []]
                        try await waitUntil("both daemons list the four finished downloads", within: .seconds(60), explaining: { "\(listed)" }) {
                            for (n, client) in clients.enumerated() {
                                let entries: [[String: String]] = try await client.call("aria2.tellStopped", 0, 10, ["gid", "status"])
                                listed[n] = Set(entries.filter { $0["status"] == "complete" }.compactMap { $0["gid"] })
                            }
                            return listed.allSatisfy { $0 == gids }
                        }
                        for client in clients {
                            let stat: [String: String] = try await client.call("aria2.getGlobalStat")
                            #expect(stat["numStopped"] == "4")
                        }
                        for client in clients {
                            let stat: [String: String] = try await client.call("aria2.getGlobalStat")
                            let waiting: [[String: String]] = try await client.call("aria2.tellWaiting", 0, 10, ["gid"])
                            #expect(stat["numWaiting"] == "0" && stat["numActive"] == "0" && waiting.isEmpty, "\(stat)")
                        }
                        // The dashboard's Sessions panel: the fleet's four on each daemon.
                        for client in clients {
                            let overview: OverviewAnswer = try await client.call("haul.overview", "daemon")
                            #expect(overview.total == 4 && overview.states == ["complete": 4], "\(overview)")
                            #expect(Set(overview.downloads.map(\.id)) == gids)
                        }
                        let fleet: FleetAnswer = try await onB.call("haul.fleet")
                        #expect(fleet.daemons.count == 2)
                        #expect(fleet.me.map { id in fleet.daemons.contains { $0.id == id } } == true)
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            for daemon in [a, b] { daemon.send(SIGTERM) }
            for daemon in [a, b] { #expect(ChildProcess.exitCode(await daemon.waitForExit()) == 0) }
            try outcome.get()
        }
    }

    /// Two downloads added through `b` and run to completion by `a`, then one of `a`'s own
    /// left running: `b`'s listing (`haul.list`) and status show the two completed and the
    /// running one, and a wait on `b` (`haul.wait`) returns with the end. Before, `b` listed its own record of the two, queued for ever, and, taking
    /// those for unfinished downloads it held, did not look for the running one at all.
    @Test func downloadsAddedHereAndRunElsewhereAreListedAsTheyAre() async throws {
        try await Self.withMembersServing { a, b, scene in
            let (server, out, cluster, url) = (scene.server, scene.out, scene.cluster, scene.url)
            var added: [DownloadID] = []
            for n in 0..<2 {
                let request = DownloadRequest(url: URL(string: server.url("/file/h\(n).bin", ["size": "3000", "seed": "\(n + 70)"]))!, directory: out)
                added.append(try await b.add(request).id)
            }
            // A client of `b` waiting for the first (haul.wait) hears of its end on `a`.
            let first = added[0]
            let waited = Task { try await b.waitInFleet(first, timeout: .seconds(90)) }
            let slow = DownloadRequest(url: URL(string: server.url("/file/own.bin", ["size": "400000", "seed": "79", "rate": "20000"]))!, directory: out)
            let own = try await a.add(slow).id
            try await waitUntil("two completed rows and one running", within: .seconds(60)) {
                let completed = try await Self.rows(cluster, url, state: "completed")
                let running = try await Self.rows(cluster, url, state: "running")
                return completed == "2" && running == "1"
            }
            let listed = await b.downloadsInFleet()
            let states = Dictionary(listed.map { ($0.id, $0.state) }, uniquingKeysWith: { first, _ in first })
            #expect(listed.count == 3, "\(listed.map { "\($0.id) \($0.state)" })")
            #expect(added.allSatisfy { states[$0] == .completed }, "\(states)")
            #expect(states[own] == .running, "\(states)")
            let end = try await waited.value
            #expect(end?.state == .completed, "\(String(describing: end))")
            for id in added {
                let status = await b.snapshotInFleet(id)
                #expect(status?.state == .completed && status?.progress.completedBytes == 3000, "\(String(describing: status))")
            }
        }
    }
}
