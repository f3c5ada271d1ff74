import Foundation
import PostgresNIO

/// The statements of a control through a daemon that does not hold the download
/// (`DownloadLeasing.control`), in the transaction the caller opened. They write the control's
/// own columns only (`controlRequest`, or a lease for the caller): never the owner's progress,
/// durable bytes or validator, which only a fenced write of the lease holder changes.
extension PostgresLeases {
    static func control(
        _ control: FleetControl, of id: DownloadID, session: String, owner: String, duration: Duration,
        on connection: PostgresConnection
    ) async throws -> ControlOutcome {
        let key = Int64(bitPattern: id.rawValue)
        // Locked until commit: a claim passes over it (`SKIP LOCKED`), a fenced write of its
        // owner waits for it, so the plan is made from the row as it is when carried out.
        let rows = try await connection.all("""
            SELECT state, leaseOwner IS NOT NULL AND leaseUntil > now(), controlRequest FROM haul.download
            WHERE id = \(key) AND session = \(session) FOR UPDATE
            """, { row in try row.decode((String, Bool, String?).self) })
        let row = rows.first.flatMap { state, held, pending in
            DownloadState(rawValue: state).map {
                FleetControlPlan.Row(state: $0, held: held, pending: pending.flatMap(FleetControl.init(rawValue:)))
            }
        }
        let plan = FleetControlPlan.decide(control, row: row)
        switch plan {
        case .unknown:
            return .unknown
        case .refused(let error):
            return .refused(error)
        case .nothing:
            return .recorded(plan)
        case .request(let asked):
            // The owner learns of it at its next renewal; the notification (delivered at commit)
            // makes it read the requests now (`DownloadManager.fleetNotified`).
            try await connection.run("""
                UPDATE haul.download SET controlRequest = \(asked.rawValue) WHERE id = \(key)
                RETURNING pg_notify(\(PostgresListener.controlChannel), session)
                """)
            return .recorded(plan)
        case .withdraw:
            try await connection.run("UPDATE haul.download SET controlRequest = NULL WHERE id = \(key)")
            return .recorded(plan)
        case .takeLease:
            let epochs = try await connection.all("""
                UPDATE haul.download SET leaseOwner = \(owner), leaseUntil = now() + make_interval(secs => \(duration.inSeconds)),
                    leaseEpoch = leaseEpoch + 1, controlRequest = NULL
                WHERE id = \(key) RETURNING leaseEpoch
                """, { row in try row.decode(Int64.self) })
            guard let epoch = epochs.first else { return .unknown }
            return .leased(DownloadLease(id: id, owner: owner, epoch: epoch))
        }
    }

    /// The controls asked of the downloads of `leases` still held by them.
    static func requestedControls(_ leases: [DownloadLease], on connection: PostgresConnection) async throws -> [DownloadID: FleetControl] {
        guard !leases.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(leases.map { Int64(bitPattern: $0.id.rawValue) })
        binds.append(leases.map(\.epoch))
        binds.append(leases.map(\.owner))
        let rows = try await connection.all(PostgresQuery(unsafeSQL: """
            SELECT d.id, d.controlRequest FROM haul.download d JOIN unnest($1::bigint[], $2::bigint[], $3::text[]) AS l(id, epoch, owner)
            ON d.id = l.id AND d.leaseEpoch = l.epoch AND d.leaseOwner = l.owner WHERE d.controlRequest IS NOT NULL
            """, binds: binds)) { row in try row.decode((Int64, String).self) }
        var controls: [DownloadID: FleetControl] = [:]
        for (key, text) in rows {
            if let control = FleetControl(rawValue: text) { controls[DownloadID(rawValue: UInt64(bitPattern: key))] = control }
        }
        return controls
    }
}
