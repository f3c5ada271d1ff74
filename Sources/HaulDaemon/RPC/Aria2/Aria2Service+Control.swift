import Haul

/// Stopping, pausing, resuming and reordering downloads, and forgetting finished ones.
extension Aria2Service {
    /// `remove(gid)` and `forceRemove(gid)` → the GID. The download stops, its part file is
    /// deleted, and it stays listed as `removed` until its result is removed.
    func remove(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let info = try await download(p)
        guard !info.state.isTerminal else { throw .failed("Active Download not found for GID#\(info.id)") }
        try await managed { () async throws(HaulError) in try await manager.cancel(info.id) }
        return .string(info.id.description)
    }

    /// `pause(gid)` and `forcePause(gid)` → the GID, once the download has stopped with its
    /// bytes kept.
    func pause(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let info = try await download(p)
        guard info.state == .queued || info.state == .running else {
            throw .failed("GID#\(info.id) cannot be paused now")
        }
        try await managed { () async throws(HaulError) in try await manager.pause(info.id) }
        return .string(info.id.description)
    }

    /// `pauseAll()` and `forcePauseAll()` → "OK" once every queued and running download is paused.
    func pauseAll() async -> JSONValue {
        await manager.pauseAll()
        return "OK"
    }

    /// `unpause(gid)` → the GID; the download waits in the queue again.
    func unpause(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let info = try await download(p)
        guard info.state == .paused else { throw .failed("GID#\(info.id) cannot be unpaused now") }
        try await managed { () async throws(HaulError) in try await manager.resumeThroughFleet(info.id) }
        return .string(info.id.description)
    }

    func unpauseAll() async -> JSONValue {
        await manager.resumeAllPaused()
        return "OK"
    }

    /// `changePosition(gid, pos, how)` → the new position in the waiting queue, which holds
    /// queued and paused downloads in one order (a paused one moves and stays paused).
    func changePosition(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let gid = try p.string(0, "gid")
        let pos = try p.integer(1, "pos")
        let how = try p.string(2, "how")
        let info = try await download(gid)
        let queue = await manager.waitingInQueueOrder()
        guard let current = queue.firstIndex(of: info.id) else {
            throw .failed("GID#\(info.id) not found in the waiting queue.")
        }
        let target = try Aria2QueueMove.target(current: current, count: queue.count, pos: pos, how: how)
        let moved = try await managed { () async throws(HaulError) in try await manager.moveInQueue(info.id, toIndex: target) }
        return .integer(Int64(moved))
    }

    /// `purgeDownloadResult()` → "OK": forgets every completed, failed and removed download.
    func purgeDownloadResult() async throws(JSONRPCError) -> JSONValue {
        let forgotten = try await managed { () async throws(HaulError) in try await manager.forgetFinished() }
        for id in forgotten { connectionsAsked[id] = nil }
        return "OK"
    }

    /// `removeDownloadResult(gid)` → "OK": forgets one completed, failed or removed download.
    func removeDownloadResult(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let info = try await download(p)
        guard info.state.isTerminal else { throw .failed("Could not remove download result of GID#\(info.id)") }
        let forgotten = try await managed { () async throws(HaulError) in try await manager.forgetFinished([info.id]) }
        guard forgotten == [info.id] else { throw .failed("Could not remove download result of GID#\(info.id)") }
        connectionsAsked[info.id] = nil
        return "OK"
    }
}
