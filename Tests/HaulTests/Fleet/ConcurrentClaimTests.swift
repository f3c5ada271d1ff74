import Foundation
@testable import Haul
import HaulTestSupport
import PostgresNIO
import Testing

/// Several daemons claiming from one session at once, each through its own connections.
@Suite("Concurrent claims", .timeLimit(.minutes(3)))
struct ConcurrentClaimTests {
    /// Daemons claiming together never get the same download, and between them get every one.
    @Test func concurrentClaimersNeverShareADownload() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings(maxConcurrentDownloads: 1000))
        let added = try await fixture.add(1...120, host: { "h\($0 % 7).example" })
        let session = fixture.session
        // Every daemon's pool is open before any claims, so that they claim together.
        var stores: [PostgresStore] = []
        for _ in 0..<4 { stores.append(try await fixture.daemon()) }
        let claims = try await withThrowingTaskGroup(of: [ClaimedDownload].self) { group in
            for (daemon, store) in stores.enumerated() {
                group.addTask {
                    var mine: [ClaimedDownload] = []
                    while true {
                        let claimed = try await store.claim(session: session, for: "d\(daemon)", upTo: 3, leaseFor: .seconds(60))
                        if claimed.isEmpty { return mine }
                        mine += claimed
                    }
                }
            }
            return try await group.reduce(into: [[ClaimedDownload]]()) { $0.append($1) }
        }
        let all = claims.flatMap { $0 }.map(\.lease.id)
        #expect(all.count == added.count, "no download was claimed twice")
        #expect(Set(all) == Set(added))
        #expect(claims.filter { !$0.isEmpty }.count > 1, "the claimers ran together")
        #expect(claims.joined().allSatisfy { $0.lease.epoch == 1 })
    }

    /// While daemons claim, complete (fenced, releasing in the same transaction) and claim
    /// again, the session's limit and per-host limit hold at every claim, no download is held
    /// by two daemons at once, and each is completed exactly once.
    @Test func limitsHoldWhileDaemonsClaimAndComplete() async throws {
        let settings = SessionSettings(maxConcurrentDownloads: 5, maxDownloadsPerHost: 2)
        let fixture = try await LeaseFixture.make(settings)
        let added = try await fixture.add(1...48, host: { "h\($0 % 4).example" })
        let book = HoldBook()
        let session = fixture.session
        let probe = fixture.store
        var stores: [PostgresStore] = []
        for _ in 0..<4 { stores.append(try await fixture.daemon()) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (daemon, store) in stores.enumerated() {
                group.addTask {
                    let name = "d\(daemon)"
                    var held: [DownloadLease] = []
                    while await book.completedCount < added.count {
                        let claimed = try await store.claim(session: session, for: name, upTo: 2, leaseFor: .seconds(60))
                        try await book.took(claimed.map(\.lease), by: name)
                        held += claimed.map(\.lease)
                        let live = try await Self.liveLeases(session: session, in: probe)
                        await book.observe(live)
                        guard !held.isEmpty else {
                            await Task.yield()
                            continue
                        }
                        let done = held.removeFirst()
                        await book.giving(back: done)
                        var row = try #require(try await store.load(done.id))
                        row.state = .completed
                        try await store.submit([.saveProgress([row])], fencedBy: done, releasing: true)
                        await book.completed(done.id)
                    }
                }
            }
            try await group.waitForAll()
        }
        let (completions, most, mostOnAHost) = await book.summary
        #expect(completions == Dictionary(uniqueKeysWithValues: added.map { ($0, 1) }))
        #expect(most <= settings.maxConcurrentDownloads && mostOnAHost <= 2)
        #expect(most == settings.maxConcurrentDownloads, "the claimers filled the session")
    }

    /// The session's live leases, in all and the most on one host, read in one statement.
    static func liveLeases(session: String, in store: PostgresStore) async throws -> (Int, Int) {
        try await store.read("count live leases") { connection in
            let rows = try await connection.all("""
                SELECT COALESCE(SUM(n), 0)::bigint, COALESCE(MAX(n), 0)::bigint FROM (SELECT count(*) AS n FROM haul.download
                WHERE session = \(session) AND leaseOwner IS NOT NULL AND leaseUntil > now() GROUP BY host) h
                """) { row in try row.decode((Int64, Int64).self) }
            return (Int(rows[0].0), Int(rows[0].1))
        }
    }
}

/// What the claimers of one test hold, as they say: a download taken while another daemon
/// holds it is an error at once; completions are counted per download.
private actor HoldBook {
    private var holders: [DownloadID: String] = [:]
    private var completions: [DownloadID: Int] = [:]
    private var most = 0
    private var mostOnAHost = 0

    var completedCount: Int { completions.values.reduce(0, +) }
    var summary: ([DownloadID: Int], Int, Int) { (completions, most, mostOnAHost) }

    func took(_ leases: [DownloadLease], by daemon: String) throws {
        for lease in leases {
            if let holder = holders[lease.id] {
                throw HaulError(.invalidState, "\(lease) was claimed while \(holder) held it")
            }
            holders[lease.id] = daemon
        }
    }

    /// Called before the release commits: from then on another daemon may claim it.
    func giving(back lease: DownloadLease) {
        holders[lease.id] = nil
    }

    func completed(_ id: DownloadID) {
        completions[id, default: 0] += 1
    }

    func observe(_ live: (Int, Int)) {
        most = max(most, live.0)
        mostOnAHost = max(mostOnAHost, live.1)
    }
}
