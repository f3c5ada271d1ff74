/// When each connection of a segmented transfer last received a byte, and which of them are
/// holding their reads back on purpose (a speed limit's wait, a checkpoint's flush).
///
/// Why: the transfer's read timeout only fires when the whole download falls silent. One
/// stalled connection among busy ones (a server that stopped sending on it) would otherwise
/// keep the last bytes of its segment until everything else is done and the timeout runs out.
/// With this, a connection that has nothing left to do can tell a stalled one from one that is
/// merely waiting, and take its segment over (`SegmentPlan.takeOver`).
struct ConnectionSilence: Sendable {
    private var lastHeard: [Int: ContinuousClock.Instant] = [:]
    private var holds: [Int: Int] = [:]

    /// The connection received bytes (or started on new work) at `now`.
    mutating func heard(_ connection: Int, at now: ContinuousClock.Instant) {
        lastHeard[connection] = now
    }

    /// The connection stops reading on purpose until `endHold`.
    mutating func hold(_ connection: Int) {
        holds[connection, default: 0] += 1
    }

    /// A hold ended at `now`: the silence clock starts again from here.
    mutating func endHold(_ connection: Int, at now: ContinuousClock.Instant) {
        holds[connection, default: 1] -= 1
        if holds[connection] == 0 { holds[connection] = nil }
        lastHeard[connection] = now
    }

    /// Of `candidates`, the one silent the longest, if it has been silent longer than `limit`
    /// and is not holding its reads back. A connection never heard of counts as not silent.
    func longestSilent(among candidates: [Int], longerThan limit: Duration, now: ContinuousClock.Instant) -> Int? {
        var found: (connection: Int, since: ContinuousClock.Instant)?
        for connection in candidates where holds[connection] == nil {
            guard let since = lastHeard[connection], since.duration(to: now) > limit else { continue }
            if found == nil || since < found!.since { found = (connection, since) }
        }
        return found?.connection
    }
}
