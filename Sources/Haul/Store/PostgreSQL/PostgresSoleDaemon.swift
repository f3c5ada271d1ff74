import Foundation
import PostgresNIO

/// Keeps a PostgreSQL store to one `haul daemon` until daemons claim their work by lease.
///
/// The leases of docs/fleet.md have no caller yet, so several daemons on one database would
/// each run every queued download: each file fetched twice, and two writers of one part file
/// where machines share the download directory. A daemon therefore holds a session-level
/// advisory lock on a connection of its own for as long as it runs; a second one waits for it
/// up to `--store-wait`, then gives up with a message that says why. The server drops the
/// lock with the connection, so a daemon killed -9 frees the database as soon as the server
/// sees its connection close (at once on one machine; on another, when TCP says it is gone).
package final class PostgresSoleDaemon: Sendable {
    /// The advisory lock's key: "HAULDAEM" in ASCII, a number other programs are unlikely to use.
    static let lockKey: Int64 = 0x4841_554C_4441_454D

    private let connection: PostgresConnection

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Takes the database of a PostgreSQL `location` for this daemon, trying again every half
    /// second up to `wait` while another daemon holds it or the server does not answer; nil for
    /// a SQLite store (its state directory's lock does the same).
    package static func hold(_ location: StoreLocation, waitingUpTo wait: Duration) async throws(HaulError) -> PostgresSoleDaemon? {
        guard case .postgresql(let address, _) = location else { return nil }
        let deadline = ContinuousClock.now.advanced(by: wait)
        let connection = try await PostgresFailure.connect(address, waitingUpTo: wait)
        while true {
            let held: Bool
            do {
                let rows = try await connection.query("SELECT pg_try_advisory_lock(\(lockKey))", logger: PostgresStore.logger)
                held = try await rows.collect().first?.decode(Bool.self) ?? false
            } catch {
                try? await connection.close()
                throw PostgresFailure.error(error, "take the database for this daemon", address: address)
            }
            if held { return PostgresSoleDaemon(connection: connection) }
            guard ContinuousClock.now < deadline else {
                try? await connection.close()
                throw HaulError(
                    .invalidState,
                    "another haul daemon uses the download store \(address); several daemons on one database are not supported yet (each would run every download)")
            }
            do {
                try await Task.sleep(for: .milliseconds(500))
            } catch {
                try? await connection.close()
                throw HaulError(.canceled, "canceled while waiting for another haul daemon to leave \(address)")
            }
        }
    }

    /// Lets the database go (the lock goes with the connection).
    package func release() async {
        try? await connection.close()
    }
}
