import Foundation
import Haul

/// A download's options and the global ones: reading and changing them.
extension Aria2Service {
    /// `getOption(gid)`.
    func getOption(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let info = try await download(p)
        return Aria2OptionListing.download(
            info.request, asked: connectionsAsked[info.id], defaults: global, settled: settledOptions,
            userAgent: manager.configuration.userAgent)
    }

    /// The options Haul has but does not take over RPC (the daemon's settings).
    var settledOptions: [String: Aria2SettledOption] {
        Aria2SettledOptions.of(manager.configuration)
    }

    /// Reads the options of a call (see `Aria2OptionParser`).
    func parseOptions(
        _ options: [String: JSONValue], for context: Aria2OptionParser.Context
    ) throws(JSONRPCError) -> Aria2OptionValues {
        try Aria2OptionParser.parse(options, for: context, settled: settledOptions)
    }

    /// `changeOption(gid, options)` → "OK", or an error naming an option Haul does not take
    /// (and then nothing is changed). Options that change the request (dir, out,
    /// header, checksum, split, …) restart a running download from its bytes on disk, as in
    /// aria2; `max-download-limit` applies at once, without a restart.
    func changeOption(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let gid = try p.string(0, "gid")
        var values = try parseOptions(try p.object(1, "options"), for: .changeDownload)
        let info = try await download(gid)
        let id = info.id
        // The user agent it has already (listed by getOption, and given back by front-ends)
        // is no change: it must not become a header of its own.
        let agent = Aria2OptionListing.header("User-Agent", in: info.request.headers) ?? manager.configuration.userAgent
        if values.userAgent == agent { values.userAgent = nil }
        // One change of a download at a time: each reads the request as the one before left
        // it, or a restart's wait would let a second change write back a stale request.
        return try await changingOptions(of: id) { () async throws(JSONRPCError) in
            try await change(id, values)
        }
    }

    private func change(_ id: DownloadID, _ values: Aria2OptionValues) async throws(JSONRPCError) -> JSONValue {
        guard let info = await manager.snapshot(id) else { throw .failed("GID \(id) is not found") }
        guard !info.state.isTerminal else { throw .failed("Cannot change option for GID#\(info.id)") }
        let directory = try values.dir.map { text throws(JSONRPCError) in
            try downloadDirectory.resolve(text, relativeTo: global.dir)
        }
        var request = Aria2GlobalOptions.changing(info.request, values, directory: directory)
        var asked = connectionsAsked[info.id] ?? Aria2ConnectionOptions()
        if values.asksForConnections {
            asked.merge(values)
            // What was not asked is the global default, or more if the download already has
            // more connections than that (asked before the daemon restarted).
            let current = info.request.split ?? 1
            request.split = DaemonTransferOptions.connections(
                split: asked.split ?? max(current, global.split),
                maxConnectionPerServer: asked.maxConnectionPerServer ?? max(current, global.maxConnectionPerServer))
        }
        if request != info.request {
            try await managed { () async throws(HaulError) in try await manager.replaceRequest(info.id, with: request) }
        }
        if values.asksForConnections { connectionsAsked[info.id] = asked }
        if let limit = values.maxDownloadLimit {
            try await managed { () async throws(HaulError) in
                try await manager.setSpeedLimit(Aria2GlobalOptions.limit(limit), for: info.id)
            }
        }
        return "OK"
    }

    /// Runs `body` once no other change of download `id` (`changeOption`, `changeUri`) runs,
    /// in the order they came.
    func changingOptions(
        of id: DownloadID, _ body: () async throws(JSONRPCError) -> JSONValue
    ) async throws(JSONRPCError) -> JSONValue {
        if optionChangeWaiters[id] == nil {
            optionChangeWaiters[id] = []
        } else {
            await withCheckedContinuation { optionChangeWaiters[id, default: []].append($0) }
        }
        defer {
            // Hand over to the next caller (the entry stays: the change is still taken), or free it.
            if let next = optionChangeWaiters[id]?.first {
                optionChangeWaiters[id]?.removeFirst()
                next.resume()
            } else {
                optionChangeWaiters[id] = nil
            }
        }
        return try await body()
    }

    /// `getGlobalOption()`.
    func getGlobalOption() async -> JSONValue {
        Aria2OptionListing.global(
            global, maxConcurrentDownloads: await manager.maxConcurrentDownloads,
            maxOverallDownloadLimit: await manager.globalSpeedLimit ?? 0, userAgent: manager.configuration.userAgent,
            settled: settledOptions)
    }

    /// `changeGlobalOption(options)` → "OK". Every value is checked before any is applied, and an
    /// option Haul does not take fails the call, naming it.
    func changeGlobalOption(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        var values = try parseOptions(try p.object(0, "options"), for: .changeGlobal)
        // The user agent listed is no change (the manager's own stays the default).
        if values.userAgent == (global.userAgent ?? manager.configuration.userAgent) { values.userAgent = nil }
        let directory = try values.dir.map { text throws(JSONRPCError) in
            try downloadDirectory.resolve(text, relativeTo: global.dir)
        }
        if let limit = values.maxConcurrentDownloads {
            try await managed { () async throws(HaulError) in try await manager.setMaxConcurrentDownloads(limit) }
        }
        if let limit = values.maxOverallDownloadLimit { await manager.setGlobalSpeedLimit(Aria2GlobalOptions.limit(limit)) }
        global.apply(values, dir: directory)
        return "OK"
    }
}
