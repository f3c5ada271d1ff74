import Foundation
import NIOConcurrencyHelpers
import PostgresNIO

/// A daemon's row in `haul.daemon` while it runs: who is alive in a fleet on one database,
/// for the dashboard and the metrics.
///
/// The row is written at start and its `lastSeen` moved every `heartbeat` (10 s by default),
/// by the server's clock. Each heartbeat also deletes the rows of daemons silent for
/// `heartbeat × 6` (killed -9, their host gone): the table keeps one row per living daemon,
/// plus the recently dead for a minute. A clean stop deletes its own row. A heartbeat that
/// fails (the server restarting) is not an error: the next one writes the row again.
package final class PostgresDaemonPresence: Sendable {
    /// One daemon as the table records it.
    package struct Daemon: Sendable, Hashable {
        package var id: String
        package var host: String
        package var pid: Int
        package var started: Date
        package var lastSeen: Date
    }

    /// How many missed heartbeats make a daemon dead.
    static let missedBeats = 6

    package let fleetID: String
    private let store: PostgresStore
    private let heartbeat: Duration
    /// Silent this long, a daemon is dead: its row is deleted and `alive()` leaves it out.
    private let deadAfter: Duration
    private let beating = NIOLockedValueBox<Task<Void, Never>?>(nil)

    private init(store: PostgresStore, fleetID: String, heartbeat: Duration, deadAfter: Duration) {
        self.store = store
        self.fleetID = fleetID
        self.heartbeat = heartbeat
        self.deadAfter = deadAfter
    }

    /// Writes this daemon's row in the PostgreSQL store at `location` and keeps it fresh;
    /// nil for a SQLite store (one daemon: nobody to tell).
    package static func start(
        _ location: StoreLocation, fleetID: String, heartbeat: Duration = .seconds(10), waitingUpTo wait: Duration = .zero
    ) async throws(HaulError) -> PostgresDaemonPresence? {
        guard case .postgresql(let address, let stateDirectory) = location else { return nil }
        let store = try await PostgresStore.shared(address: address, stateDirectory: stateDirectory, waitingUpTo: wait)
        return try await start(store: store, fleetID: fleetID, heartbeat: heartbeat)
    }

    static func start(
        store: PostgresStore, fleetID: String, heartbeat: Duration = .seconds(10), deadAfter: Duration? = nil,
        host: String = ProcessInfo.processInfo.hostName, pid: Int32 = ProcessInfo.processInfo.processIdentifier
    ) async throws(HaulError) -> PostgresDaemonPresence {
        let presence = PostgresDaemonPresence(
            store: store, fleetID: fleetID, heartbeat: heartbeat, deadAfter: deadAfter ?? heartbeat * missedBeats)
        try await presence.beat(host: host, pid: pid)
        let task = Task { [weak presence] in
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: heartbeat)
                } catch {
                    return
                }
                try? await presence?.beat(host: host, pid: pid)
            }
        }
        presence.beating.withLockedValue { $0 = task }
        return presence
    }

    deinit {
        beating.withLockedValue { $0 }?.cancel()
    }

    /// Writes (or writes again) this daemon's row as seen now, and forgets the dead.
    private func beat(host: String, pid: Int32) async throws(HaulError) {
        let deadAfter = deadAfter.seconds
        try await store.write("record that this daemon is alive") { [fleetID] connection in
            try await connection.run("""
                WITH dead AS (DELETE FROM haul.daemon WHERE lastSeen < now() - \(deadAfter) * interval '1 second' AND id <> \(fleetID))
                INSERT INTO haul.daemon (id, host, pid) VALUES (\(fleetID), \(host), \(pid))
                ON CONFLICT (id) DO UPDATE SET lastSeen = now()
                """)
        }
    }

    /// The daemons seen within the last `deadAfter` (`heartbeat × 6`), oldest start first.
    package func alive() async throws(HaulError) -> [Daemon] {
        let deadAfter = deadAfter.seconds
        return try await store.read("list the daemons of the fleet") { connection in
            try await connection.all("""
                SELECT id, host, pid, started, lastSeen FROM haul.daemon
                WHERE lastSeen >= now() - \(deadAfter) * interval '1 second' ORDER BY started, id
                """) { row in
                let (id, host, pid, started, lastSeen) = try row.decode((String, String, Int32, Date, Date).self)
                return Daemon(id: id, host: host, pid: Int(pid), started: started, lastSeen: lastSeen)
            }
        }
    }

    /// Stops beating and deletes this daemon's row (a clean stop: nobody waits for it to age out).
    package func stop() async {
        beating.withLockedValue { $0 }?.cancel()
        try? await store.write("remove this daemon from the fleet") { [fleetID] connection in
            try await connection.run("DELETE FROM haul.daemon WHERE id = \(fleetID)")
        }
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
