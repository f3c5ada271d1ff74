import Foundation
import Haul

/// `haul.fleet()`: the daemons of this daemon's fleet that are alive (the `haul.daemon` table
/// of its PostgreSQL store: seen within the last minute), for the dashboard's fleet panel.
/// `{"self": ID, "daemons": [{id, host, pid, started, lastSeen}]}`, oldest start first, times
/// as ISO 8601 by the database's clock; on SQLite (no fleet) `self` is null and the list empty.
struct DashboardFleetMethods: Sendable {
    let presence: PostgresDaemonPresence?

    func register(in table: inout RPCMethodTable) {
        table.register("haul.fleet") { (_, _) async throws(JSONRPCError) -> JSONValue in
            try await self.fleet()
        }
    }

    func fleet() async throws(JSONRPCError) -> JSONValue {
        guard let presence else { return ["self": .null, "daemons": .array([])] }
        let daemons: [PostgresDaemonPresence.Daemon]
        do {
            daemons = try await presence.alive()
        } catch {
            throw JSONRPCError(error)
        }
        let time = Date.ISO8601FormatStyle()
        return [
            "self": .string(presence.fleetID),
            "daemons": .array(daemons.map { daemon in
                .object([
                    "id": .string(daemon.id),
                    "host": .string(daemon.host),
                    "pid": .integer(Int64(daemon.pid)),
                    "started": .string(daemon.started.formatted(time)),
                    "lastSeen": .string(daemon.lastSeen.formatted(time)),
                ])
            }),
        ]
    }
}
