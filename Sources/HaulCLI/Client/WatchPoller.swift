/// Reads one `WatchSnapshot` from the daemon: the first page of the waiting list, then the
/// active list (in that order; see `WatchSnapshot.active`), the totals, and what became of
/// the downloads the view followed that left both lists.
struct WatchPoller: Sendable {
    let client: DaemonClient

    func snapshot(following view: WatchView) async throws(CommandFailure) -> WatchSnapshot {
        let keys = Aria2Entry.listKeys
        let waiting = try await client.tellWaiting(offset: 0, count: DaemonClient.pageSize, keys: keys)
        let active = try await client.tellActive(keys: keys)
        let stat = try await client.globalStat()
        var departed: [Aria2Entry] = []
        var forgotten: [String] = []
        for gid in view.departures(waiting: waiting, active: active) {
            do throws(CommandFailure) {
                departed.append(try await client.tellStatus(gid, keys: keys))
            } catch where error.status == .daemonRefused {
                // `haul rm` (or an aria2 client) removed its result before this refresh.
                forgotten.append(gid)
            }
        }
        return WatchSnapshot(
            waiting: waiting, waitingIsComplete: waiting.count < DaemonClient.pageSize, active: active, stat: stat,
            departed: departed, forgotten: forgotten)
    }
}
