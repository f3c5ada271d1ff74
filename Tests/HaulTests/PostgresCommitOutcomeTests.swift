import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// A PostgreSQL transaction whose `COMMIT` went unanswered is looked up, not guessed at: one
/// the server committed counts as written (and is not written again), one it never got stays
/// a failure (`PostgresStore+CommitOutcome`). Each test runs its store through a relay that
/// ends the connection at `COMMIT` (`CommitCuttingRelay`).
@Suite("PostgreSQL: commits whose answer was lost", .timeLimit(.minutes(3)))
struct PostgresCommitOutcomeTests {
    /// A store on a new database of the test cluster, reached through a relay.
    private static func withRelayedStore(
        _ body: (PostgresStore, CommitCuttingRelay, PostgresCluster, String) async throws -> Void
    ) async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let relay = try await CommitCuttingRelay.start(to: cluster.port)
        var address = try PostgresAddress(parsing: url)
        address.port = relay.port
        do {
            let store = try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .zero, operationTimeLimit: .seconds(20))
            try await body(store, relay, cluster, database)
        } catch {
            await relay.stop()
            throw error
        }
        await relay.stop()
    }

    private static func eventCount(_ cluster: PostgresCluster, _ database: String) async throws -> String {
        try await cluster.psql("SELECT count(*) FROM haul.event WHERE session = 's'", database: database)
    }

    /// The server commits a batch that appends a download's `completed` event, and the
    /// connection ends before its answer: the batch succeeds, and the event is there once.
    /// Before, the batch failed, its caller wrote it again, and the app saw the download
    /// complete twice (`FleetStoreOutageTests` in CI). A transaction with a value returns it.
    @Test func aCommitWhoseAnswerWasLostCountsAsWritten() async throws {
        try await Self.withRelayedStore { store, relay, cluster, database in
            relay.arm(.afterTheAnswer)
            try await store.submit(.appendEvents(session: "s", [StoredEvent(kind: .completed, download: DownloadID(rawValue: 7))]))
            #expect(relay.cutsMade == 1, "the relay did not cut the commit: the test tested nothing")
            #expect(try await Self.eventCount(cluster, database) == "1")
            #expect(store.transactionsInterrupted.withLockedValue { $0 } == 1, "counted, though it was found committed")

            relay.arm(.afterTheAnswer)
            let value = try await store.write("insert a session") { connection in
                try await connection.run("INSERT INTO haul.session (id, createdAt) VALUES ('t', 0)")
                return 42
            }
            #expect(relay.cutsMade == 2)
            #expect(value == 42)
            #expect(try await cluster.psql("SELECT count(*) FROM haul.session WHERE id = 't'", database: database) == "1")
        }
    }

    /// The connection ends before the server got `COMMIT`: the transaction was rolled back,
    /// so the batch fails as a store that cannot be reached, and nothing of it is there; the
    /// same batch written again is there once.
    @Test func aCommitThatNeverReachedTheServerStaysAFailure() async throws {
        try await Self.withRelayedStore { store, relay, cluster, database in
            let write = StoreWrite.appendEvents(session: "s", [StoredEvent(kind: .completed, download: DownloadID(rawValue: 7))])
            relay.arm(.beforeTheServer)
            let error = await #expect(throws: HaulError.self) { try await store.submit(write) }
            #expect(error?.code == .connectionFailed, "\(String(describing: error))")
            #expect(relay.cutsMade == 1)
            #expect(try await Self.eventCount(cluster, database) == "0")

            try await store.submit(write)
            #expect(try await Self.eventCount(cluster, database) == "1")
        }
    }
}
