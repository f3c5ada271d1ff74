import PostgresNIO

/// Leases in the PostgreSQL store: each in a transaction of its own, beside the group commit
/// (a claim must not wait behind a batch of rows, nor make one wait on its lock).
extension PostgresStore: DownloadLeasing {
    func claim(session: String, for owner: String, upTo limit: Int, leaseFor duration: Duration) async throws(HaulError) -> [ClaimedDownload] {
        try await write("claim downloads of session '\(session)' for \(owner)") { connection in
            try await PostgresLeases.claim(session: session, owner: owner, limit: limit, duration: duration, on: connection)
        }
    }

    func renew(_ leases: [DownloadLease], for duration: Duration) async throws(HaulError) -> LeaseRenewal {
        guard !leases.isEmpty else { return LeaseRenewal(renewed: [], lost: []) }
        let held = try await write("renew \(leases.count) leases") { connection in
            try await PostgresLeases.renew(leases, duration: duration, on: connection)
        }
        var controls: [DownloadID: FleetControl] = [:]
        for (id, control) in held { if let control { controls[id] = control } }
        return LeaseRenewal(
            renewed: leases.filter { held[$0.id] != nil }, lost: leases.filter { held[$0.id] == nil }, controls: controls)
    }

    @discardableResult
    func release(_ leases: [DownloadLease]) async throws(HaulError) -> [DownloadLease] {
        guard !leases.isEmpty else { return [] }
        let released = try await write("release \(leases.count) leases") { connection in
            try await PostgresLeases.release(leases, on: connection)
        }
        return leases.filter { released.contains($0.id) }
    }
}

extension PostgresStore {
    func control(
        _ control: FleetControl, of id: DownloadID, session: String, for owner: String, leaseFor duration: Duration
    ) async throws(HaulError) -> ControlOutcome {
        try await write("\(control.rawValue) \(id) through \(owner)") { connection in
            try await PostgresLeases.control(control, of: id, session: session, owner: owner, duration: duration, on: connection)
        }
    }

    func requestedControls(_ leases: [DownloadLease]) async throws(HaulError) -> [DownloadID: FleetControl] {
        guard !leases.isEmpty else { return [:] }
        return try await read("read the controls of \(leases.count) leases") { connection in
            try await PostgresLeases.requestedControls(leases, on: connection)
        }
    }
}
