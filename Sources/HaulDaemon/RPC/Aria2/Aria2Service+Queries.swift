import Haul

/// Reading downloads: one, the active ones, a page of the waiting or stopped ones, the totals.
extension Aria2Service {
    /// `tellStatus(gid[, keys])`.
    func tellStatus(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let gid = try p.string(0, "gid")
        let keys = try p.optionalStrings(1, "keys")
        let info = try await download(gid)
        return Aria2Status.entry(info, keys: keys, servers: await servers(of: info))
    }

    /// Where `info` fetches from right now (none unless it runs), for `files[].uris`.
    func servers(of info: DownloadInfo) async -> [DownloadServer] {
        info.state == .running ? await manager.servers(of: info.id) : []
    }

    /// `getServers(gid)`: only a running download has a server.
    func getServers(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let info = try await download(p)
        guard info.state == .running else { throw .failed("No active download for GID#\(info.id)") }
        return Aria2Status.servers(info, servers: await manager.servers(of: info.id))
    }

    /// `tellActive([keys])`: running downloads, in the order they were added.
    func tellActive(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let keys = try p.optionalStrings(0, "keys")
        let ids = await manager.downloadIDs(inStates: [.running])
        // In a fleet, the other daemons' running downloads too, as their owners checkpointed them.
        let infos = await manager.infos(ids) + (await manager.downloadsNotListedHere(inStates: [.running]))
        return await entries(infos, keys: keys)
    }

    /// `tellWaiting(offset, num[, keys])`: queued and paused downloads in the waiting queue's
    /// one order (paused ones keep their place among the others, as in aria2).
    func tellWaiting(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let (offset, num, keys) = try page(p)
        let ids = await manager.waitingInQueueOrder()
        // In a fleet, the downloads other daemons hold follow this daemon's own queue.
        let elsewhere = await manager.downloadsNotListedHere(inStates: [.queued, .paused])
        let page = Aria2Pagination.page(count: ids.count + elsewhere.count, offset: offset, num: num)
        let local = Dictionary(uniqueKeysWithValues: await manager.infos(page.filter { $0 < ids.count }.map { ids[$0] }).map { ($0.id, $0) })
        let infos = page.compactMap { $0 < ids.count ? local[ids[$0]] : elsewhere[$0 - ids.count] }
        return await entries(infos, keys: keys)
    }

    /// `tellStopped(offset, num[, keys])`: completed, failed and removed downloads, in the
    /// order they were added. In a fleet, this daemon's own are followed by those other
    /// daemons ended (the newest of them, as many as `--max-download-result`), read a page at
    /// a time from the store.
    func tellStopped(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let (offset, num, keys) = try page(p)
        await manager.dropFinishedForgottenElsewhere()
        let ids = await manager.downloadIDs(inStates: [.completed, .failed, .canceled])
        let elsewhereCount = await manager.finishedElsewhereCount()
        let page = Aria2Pagination.page(count: ids.count + elsewhereCount, offset: offset, num: num)
        let local = Dictionary(uniqueKeysWithValues: await manager.infos(page.filter { $0 < ids.count }.map { ids[$0] }).map { ($0.id, $0) })
        let elsewhere = await manager.finishedElsewhere(at: page.filter { $0 >= ids.count }.map { $0 - ids.count }, of: elsewhereCount)
        let infos = page.compactMap { $0 < ids.count ? local[ids[$0]] : elsewhere[$0 - ids.count] }
        return await entries(infos, keys: keys)
    }

    /// `getGlobalStat()`: speeds and counts, as strings. In a fleet the counts are the
    /// fleet's, as `tellActive`, `tellWaiting` and `tellStopped` list it; the speed is this
    /// daemon's own (the store has no speeds).
    func getGlobalStat() async -> JSONValue {
        await manager.dropFinishedForgottenElsewhere()
        let counts = await manager.stateCountsAsListed()
        let stopped = String(counts.completed + counts.failed + counts.canceled + (await manager.finishedElsewhereCount()))
        return [
            "downloadSpeed": .string(String(Int64(counts.bytesPerSecond))),
            "uploadSpeed": "0",
            "numActive": .string(String(counts.running)),
            "numWaiting": .string(String(counts.queued + counts.paused)),
            "numStopped": .string(stopped),
            "numStoppedTotal": .string(stopped),
        ]
    }

    private func page(_ p: RPCParameters) throws(JSONRPCError) -> (offset: Int, num: Int, keys: [String]?) {
        (try p.integer(0, "offset"), try p.integer(1, "num"), try p.optionalStrings(2, "keys"))
    }

    private func entries(_ infos: [DownloadInfo], keys: [String]?) async -> JSONValue {
        var entries: [JSONValue] = []
        for info in infos {
            entries.append(Aria2Status.entry(info, keys: keys, servers: await servers(of: info)))
        }
        return .array(entries)
    }
}
