import Foundation
import PostgresNIO

/// The statements of leases (`DownloadLeasing`), run inside a transaction the caller opened.
///
/// Every time is the server's (`now()`: the transaction's start), so daemons with skewed
/// clocks agree on who holds what. See `docs/fleet.md` for the design.
enum PostgresLeases {
    /// The first key of the advisory lock that serialises claims per session; the second is
    /// `hashtext(session)` (two sessions sharing a hash only take turns, harmlessly).
    static let claimLockClass: Int32 = 0x4C45_4153  // "LEAS"

    /// Claims up to `limit` runnable downloads of `session` for `owner` (see
    /// `PostgresStore.claim`).
    ///
    /// Runnable: queued or running, and not under an unexpired lease. Claims of one session
    /// take turns (the advisory lock), so the live leases counted here are every daemon's, and
    /// the limits hold across the fleet; within that, rows another transaction has locked
    /// (being written, or claimed by another session's claim) are skipped, not waited for.
    static func claim(
        session: String, owner: String, limit: Int, duration: Duration, on connection: PostgresConnection
    ) async throws -> [ClaimedDownload] {
        guard limit > 0 else { return [] }
        try await connection.run("SELECT pg_advisory_xact_lock(\(claimLockClass), hashtext(\(session)))")
        let stored = try await connection.all("SELECT settings FROM haul.session WHERE id = \(session)") { row in
            try row.decode(String?.self)
        }
        guard let settingsRow = stored.first else { return [] }
        let settings = try settingsRow.map { try JSONDecoder().decode(SessionSettings.self, from: Data($0.utf8)) } ?? SessionSettings()

        var live: [String: Int] = [:]
        for (host, count) in try await connection.all("""
            SELECT host, count(*)::bigint FROM haul.download
            WHERE session = \(session) AND leaseOwner IS NOT NULL AND leaseUntil > now() GROUP BY host
            """, { row in try row.decode((String, Int64).self) }) {
            live[host] = Int(count)
        }
        var plan = LeaseClaimPlan(settings: settings, wanted: limit, liveLeases: live)
        guard plan.remaining > 0 else { return [] }
        let group = settings.groupOrder == .sequential ? try await currentGroup(of: session, on: connection) : nil

        var cursor: CandidateRow?
        while plan.remaining > 0 {
            let page = try await connection.all(
                candidatesQuery(session: session, group: group, skippingHosts: plan.fullHosts, after: cursor, limit: min(500, max(16, plan.remaining * 4))),
                CandidateRow.init(row:))
            for candidate in page {
                plan.offer(LeaseClaimPlan.Candidate(id: candidate.id, host: candidate.host, expiredOwner: candidate.owner))
                if plan.remaining == 0 { break }
            }
            guard let last = page.last else { break }
            cursor = last
        }
        guard !plan.chosen.isEmpty else { return [] }

        let keys = plan.chosen.map { Int64(bitPattern: $0.id.rawValue) }
        var epochs: [Int64: (epoch: Int64, control: String?)] = [:]
        for (key, epoch, control) in try await connection.all("""
            UPDATE haul.download SET leaseOwner = \(owner), leaseUntil = now() + make_interval(secs => \(duration.inSeconds)),
                leaseEpoch = leaseEpoch + 1
            WHERE id = ANY(\(keys)) RETURNING id, leaseEpoch, controlRequest
            """, { row in try row.decode((Int64, Int64, String?).self) }) {
            epochs[key] = (epoch, control)
        }
        return plan.chosen.compactMap { candidate in
            guard let claimed = epochs[Int64(bitPattern: candidate.id.rawValue)] else { return nil }
            return ClaimedDownload(
                lease: DownloadLease(id: candidate.id, owner: owner, epoch: claimed.epoch), host: candidate.host,
                previousOwner: candidate.expiredOwner, control: claimed.control.flatMap(FleetControl.init(rawValue:)))
        }
    }

    /// With sequential groups, the one group whose downloads may start: the earliest created
    /// with a download queued or running (leased or not), as `SchedulerState` decides locally.
    private static func currentGroup(of session: String, on connection: PostgresConnection) async throws -> String? {
        try await connection.all("""
            SELECT g.name FROM haul.downloadGroup g WHERE g.session = \(session) AND EXISTS (
                SELECT 1 FROM haul.download d WHERE d.session = g.session AND d.groupName = g.name
                AND d.state IN ('queued', 'running'))
            ORDER BY g.ordinal LIMIT 1
            """, { row in try row.decode(String.self) }).first
    }

    /// A runnable download as the claim's scan returns it, with its place in queue order.
    private struct CandidateRow {
        var id: DownloadID
        var host: String
        var owner: String?
        var priority: Int64
        var position: Int64

        init(row: PostgresRow) throws {
            let (key, host, owner, priority, position) = try row.decode((Int64, String, String?, Int64, Int64).self)
            self.id = DownloadID(rawValue: UInt64(bitPattern: key))
            self.host = host
            self.owner = owner
            self.priority = priority
            self.position = position
        }
    }

    /// One page of runnable downloads in queue order (priority, then position), after
    /// `cursor`, locked for this transaction; rows other transactions hold are skipped.
    private static func candidatesQuery(
        session: String, group: String?, skippingHosts full: [String], after cursor: CandidateRow?, limit: Int
    ) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append(session)
        binds.append(full)
        var sql = """
            SELECT id, host, leaseOwner, priority, position FROM haul.download
            WHERE session = $1 AND state IN ('queued', 'running') AND (leaseOwner IS NULL OR leaseUntil <= now())
            AND host <> ALL($2)
            """
        if let group {
            binds.append(group)
            sql += " AND (groupName IS NULL OR groupName = $\(binds.count))"
        }
        if let cursor {
            binds.append(cursor.priority)
            let priority = binds.count
            binds.append(cursor.position)
            binds.append(Int64(bitPattern: cursor.id.rawValue))
            sql += " AND (priority < $\(priority) OR (priority = $\(priority) AND (position, id) > ($\(priority + 1), $\(priority + 2))))"
        }
        binds.append(Int64(limit))
        sql += " ORDER BY priority DESC, position, id LIMIT $\(binds.count) FOR UPDATE SKIP LOCKED"
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// Extends the leases still held: same owner and epoch, and not yet expired (an expired
    /// lease is not revived, even if nobody took it yet: the session's limits counted it out).
    /// Rows are locked in ID order, as every multi-row lease statement does, so two renewals
    /// never wait on each other in a cycle.
    ///
    /// Returns the leases renewed, each with the control (pause, cancel) another daemon asked
    /// of its download and its owner has not carried out yet (`controlRequest`): found by the
    /// renewal at no extra statement.
    static func renew(
        _ leases: [DownloadLease], duration: Duration, on connection: PostgresConnection
    ) async throws -> [DownloadID: FleetControl?] {
        try await matching(
            leases, on: connection, update: "UPDATE haul.download d SET leaseUntil = now() + make_interval(secs => $4)",
            seconds: duration.inSeconds, condition: "AND d.leaseUntil > now()")
    }

    /// Clears the leases still held by their owner at their epoch (expired or not; the epoch
    /// stays, so the next claim's is higher). `clearingControl`: the download ended here (a
    /// fenced end), so a control asked of it is done or moot (a completion wins over a pause);
    /// a plain release (shutdown, nothing done) keeps it for the next claimer to carry out.
    @discardableResult
    static func release(
        _ leases: [DownloadLease], clearingControl: Bool = false, on connection: PostgresConnection
    ) async throws -> Set<DownloadID> {
        let control = clearingControl ? ", controlRequest = NULL" : ""
        return Set(try await matching(
            leases, on: connection, update: "UPDATE haul.download d SET leaseOwner = NULL, leaseUntil = NULL\(control)",
            seconds: nil, condition: "").keys)
    }

    /// Runs `update` (`seconds` bound as `$4`) on the rows of `leases` still held by their
    /// owner at their epoch (plus `condition`), locked in ID order; returns their IDs, with
    /// the control requested of each.
    private static func matching(
        _ leases: [DownloadLease], on connection: PostgresConnection, update: String, seconds: Double?, condition: String
    ) async throws -> [DownloadID: FleetControl?] {
        guard !leases.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(leases.map { Int64(bitPattern: $0.id.rawValue) })
        binds.append(leases.map(\.epoch))
        binds.append(leases.map(\.owner))
        if let seconds { binds.append(seconds) }
        let sql = """
            \(update) FROM (
                SELECT d.id FROM haul.download d JOIN unnest($1::bigint[], $2::bigint[], $3::text[]) AS l(id, epoch, owner)
                ON d.id = l.id AND d.leaseEpoch = l.epoch AND d.leaseOwner = l.owner \(condition)
                ORDER BY d.id FOR UPDATE OF d
            ) held WHERE d.id = held.id RETURNING d.id, d.controlRequest
            """
        let rows = try await connection.all(PostgresQuery(unsafeSQL: sql, binds: binds)) { row in try row.decode((Int64, String?).self) }
        var held: [DownloadID: FleetControl?] = [:]
        for (key, control) in rows {
            held[DownloadID(rawValue: UInt64(bitPattern: key))] = .some(control.flatMap(FleetControl.init(rawValue:)))
        }
        return held
    }

    /// Whether the group has no unfinished download left, with the group's row locked until
    /// commit: the transactions that finish a group's downloads take turns here, so the last
    /// one sees every other's end (each check is a new snapshot) and exactly one finds it
    /// complete. `FOR NO KEY UPDATE`, not `FOR UPDATE`: completers still take turns, but the
    /// `FOR KEY SHARE` lock of a foreign-key check on the same row (PostgreSQL checks the keys
    /// of a download row updated twice in one transaction, as a fenced end is: its writes, then
    /// its release) neither blocks it nor is blocked by it. With `FOR UPDATE`, two daemons each
    /// holding that share lock and each wanting the update lock deadlocked.
    static func completes(_ group: LeaseFence.GroupOfLease, on connection: PostgresConnection) async throws -> Bool {
        let locked = try await connection.all("""
            SELECT 1 FROM haul.downloadGroup WHERE session = \(group.session) AND name = \(group.name) FOR NO KEY UPDATE
            """, { row in try row.decode(Int32.self) })
        guard !locked.isEmpty else { return false }
        let unfinished = try await connection.all("""
            SELECT count(*)::bigint FROM haul.download WHERE session = \(group.session) AND groupName = \(group.name)
            AND state NOT IN ('completed', 'failed', 'canceled')
            """, { row in try row.decode(Int64.self) })
        return unfinished.first == 0
    }

    /// The members of a complete group by outcome, in queue order (position, as one daemon
    /// lists its members): what its `groupCompleted` event carries. Read once per group, by
    /// the transaction that found it complete.
    static func outcomes(
        of group: LeaseFence.GroupOfLease, on connection: PostgresConnection
    ) async throws -> (completed: [DownloadID], failed: [DownloadID], canceled: [DownloadID]) {
        let rows = try await connection.all("""
            SELECT id, state FROM haul.download WHERE session = \(group.session) AND groupName = \(group.name)
            ORDER BY position, id
            """, { row in try row.decode((Int64, String).self) })
        var outcomes: (completed: [DownloadID], failed: [DownloadID], canceled: [DownloadID]) = ([], [], [])
        for (key, state) in rows {
            let id = DownloadID(rawValue: UInt64(bitPattern: key))
            switch DownloadState(rawValue: state) {
            case .completed: outcomes.completed.append(id)
            case .failed: outcomes.failed.append(id)
            case .canceled: outcomes.canceled.append(id)
            default: continue
            }
        }
        return outcomes
    }

    /// Whether `fence`'s lease still holds, locking the download's row until commit so that no
    /// claim can take it before the fenced writes are in; records the refusal on the fence.
    static func holds(_ fence: LeaseFence, on connection: PostgresConnection) async throws -> Bool {
        let key = Int64(bitPattern: fence.lease.id.rawValue)
        let rows = try await connection.all("SELECT leaseOwner, leaseEpoch FROM haul.download WHERE id = \(key) FOR UPDATE") { row in
            try row.decode((String?, Int64).self)
        }
        guard let (owner, epoch) = rows.first else {
            fence.refuse(LeaseFence.Refusal(owner: nil, epoch: nil))
            return false
        }
        guard owner == fence.lease.owner, epoch == fence.lease.epoch else {
            fence.refuse(LeaseFence.Refusal(owner: owner, epoch: epoch))
            return false
        }
        return true
    }
}
