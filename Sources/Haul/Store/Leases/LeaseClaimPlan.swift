/// Which of a session's runnable downloads one claim takes, as a value without I/O.
///
/// The claim's transaction (`PostgresLeases.claim`) counts the session's live leases across
/// the fleet, then offers candidates in queue order; the plan takes each one that the
/// session's limits and the daemon's own cap leave room for. A candidate whose host is full is
/// passed over, never blocking the downloads behind it (as `SchedulerState` does locally).
///
/// Room: `maxConcurrentDownloads` minus the live leases of the session (whoever holds them),
/// and per host `maxDownloadsPerHost` minus that host's live leases; never more than `wanted`,
/// the daemon's free local slots.
struct LeaseClaimPlan: Sendable {
    struct Candidate: Sendable, Hashable {
        var id: DownloadID
        var host: String
        /// The daemon whose lease on it expired (a takeover), nil when nobody held it.
        var expiredOwner: String?
    }

    let wanted: Int
    let maxConcurrent: Int
    let maxPerHost: Int?
    private var live: Int
    private var livePerHost: [String: Int]
    private(set) var chosen: [Candidate] = []

    /// - Parameters:
    ///   - liveLeases: the session's unexpired leases per host, every daemon's.
    init(settings: SessionSettings, wanted: Int, liveLeases: [String: Int]) {
        self.wanted = max(0, wanted)
        self.maxConcurrent = settings.maxConcurrentDownloads
        self.maxPerHost = settings.maxDownloadsPerHost
        self.live = liveLeases.values.reduce(0, +)
        self.livePerHost = liveLeases
    }

    /// How many more downloads this claim may take.
    var remaining: Int {
        max(0, min(wanted - chosen.count, maxConcurrent - live))
    }

    /// Hosts with no room left: the claim's scan skips their downloads.
    var fullHosts: [String] {
        guard let maxPerHost else { return [] }
        return livePerHost.filter { $0.value >= maxPerHost }.map(\.key).sorted()
    }

    /// Takes `candidate` if there is room for it; returns whether it did.
    @discardableResult
    mutating func offer(_ candidate: Candidate) -> Bool {
        guard remaining > 0 else { return false }
        if let maxPerHost, livePerHost[candidate.host, default: 0] >= maxPerHost { return false }
        chosen.append(candidate)
        live += 1
        livePerHost[candidate.host, default: 0] += 1
        return true
    }
}
