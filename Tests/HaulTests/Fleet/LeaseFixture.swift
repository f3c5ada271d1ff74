import Foundation
@testable import Haul
import HaulTestSupport

/// A database of the test cluster with one session's settings and downloads in it, and stores
/// opened on it as separate daemons would (each its own connection pool).
struct LeaseFixture {
    let cluster: PostgresCluster
    let address: PostgresAddress
    let database: String
    /// The store the downloads were written through; daemons open their own (`daemon()`).
    let store: PostgresStore
    let session = "fleet"

    static func make(_ settings: SessionSettings) async throws -> LeaseFixture {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let address = try PostgresAddress(parsing: url)
        let store = try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .zero)
        let fixture = LeaseFixture(cluster: cluster, address: address, database: database, store: store)
        try await store.saveSettings(settings, session: fixture.session)
        return fixture
    }

    /// A store of its own, as another daemon on the same database would open.
    func daemon(operationTimeLimit: Duration = PostgresStore.defaultOperationTimeLimit) async throws -> PostgresStore {
        try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .zero, operationTimeLimit: operationTimeLimit)
    }

    /// A manager of the fixture's session on `store`, keeping an outbox, as a daemon's is.
    func manager(on store: PostgresStore) -> DownloadManager {
        var configuration = DownloadManager.Configuration()
        configuration.keepsEventOutbox = true
        return DownloadManager(configuration: configuration, store: store, session: session)
    }

    /// Adds queued downloads `numbers` of the session (positions in that order), on `host`.
    @discardableResult
    func add(
        _ numbers: some Sequence<Int>, host: (Int) -> String = { _ in "example.com" }, group: String? = nil, priority: Int = 0
    ) async throws -> [DownloadID] {
        let downloads = numbers.map { n in
            var download = StoreTests.minimal(n, session: session, group: group)
            download.kept = KeptRequest(DownloadRequest(
                url: URL(string: "https://\(host(n))/files/\(n).bin")!,
                directory: URL(fileURLWithPath: "/srv/downloads", isDirectory: true), priority: priority))
            return download
        }
        try await store.save(downloads)
        return downloads.map(\.id)
    }

    /// One value of a query, as `psql` prints it.
    func sql(_ query: String) async throws -> String {
        try await cluster.psql(query, database: database)
    }

    /// Ends the leases of `ids` now, as if their owner had stopped renewing long ago.
    func expire(_ ids: [DownloadID]) async throws {
        let keys = ids.map { String(Int64(bitPattern: $0.rawValue)) }.joined(separator: ",")
        _ = try await sql("UPDATE haul.download SET leaseUntil = now() - interval '1 second' WHERE id IN (\(keys))")
    }

    /// The session's live leases as the server counts them: in all, and the most on one host.
    func liveLeases() async throws -> (total: Int, busiestHost: Int) {
        let text = try await sql("""
            SELECT COALESCE(SUM(n), 0) || ' ' || COALESCE(MAX(n), 0) FROM (SELECT count(*) AS n FROM haul.download
            WHERE session = '\(session)' AND leaseOwner IS NOT NULL AND leaseUntil > now() GROUP BY host) h
            """)
        let parts = text.split(separator: " ").compactMap { Int($0) }
        return (parts[0], parts[1])
    }
}
