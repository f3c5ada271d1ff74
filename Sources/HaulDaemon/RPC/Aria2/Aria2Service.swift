import Foundation
import Haul

/// What the daemon tells the aria2 methods about itself.
package struct Aria2Configuration: Sendable {
    /// Every download is saved in this directory or below it; `dir` options are resolved
    /// against it and refused outside it. It must exist. It is also the default `dir`.
    package var downloadDirectory: URL
    /// Called by `aria2.shutdown` (false) and `aria2.forceShutdown` (true). It must only start
    /// the shutdown and return, so that the call can still be answered.
    package var requestShutdown: @Sendable (_ force: Bool) -> Void
    /// The defaults of new downloads' `split`, `max-connection-per-server` and
    /// `max-download-limit` (the daemon's command line). The overall limit is the manager's
    /// global one, read from it.
    package var transfers: DaemonTransferOptions

    package init(
        downloadDirectory: URL, transfers: DaemonTransferOptions = DaemonTransferOptions(),
        requestShutdown: @escaping @Sendable (_ force: Bool) -> Void
    ) {
        self.downloadDirectory = downloadDirectory
        self.transfers = transfers
        self.requestShutdown = requestShutdown
    }
}

/// aria2's RPC methods, acting on one `DownloadManager` (aria2 has no sessions: the daemon
/// gives it its default session).
///
/// Parameters and results have aria2's shapes (see its manual, "RPC INTERFACE"); download IDs
/// are GIDs. Register the methods with `register(in:)`. Where Haul differs from aria2:
/// - several URIs of a download are mirrors of one file: a split download spreads its
///   connections over every one that serves the same file (same length and validator), and
///   one that serves another file is dropped; `out` is a file name, and `dir` must stay
///   inside the download directory;
/// - the waiting queue is aria2's one queue (paused downloads keep their places in it), but a
///   move is stored as a priority (`DownloadManager.moveInQueue`): after a restart, downloads
///   of the same priority wait in the order they were added;
/// - `tellStopped` lists finished downloads in the order they were added, not stopped;
/// - a download gets `min(split, max-connection-per-server)` connections (at most 16) when the
///   server allows ranges; `max-download-limit` applies at once, even to a running download;
///   `max-overall-download-limit` is the manager's global limit, which the daemon shares
///   between all its sessions;
/// - an option Haul does not honour fails the call, naming it, instead of being ignored
///   (except `Aria2BlindOptions`, which front-ends send unasked); the daemon's own settings
///   (`timeout`, proxies, …) are listed and accepted only with the value they have
///   (`Aria2SettledOptions`);
/// - BitTorrent and Metalink (`addTorrent`, `addMetalink`) are not supported; `getPeers`
///   answers `[]`, as aria2 does for an HTTP download.
package actor Aria2Service {
    let manager: DownloadManager
    let configuration: Aria2Configuration
    let downloadDirectory: Aria2DownloadDirectory
    var global: Aria2GlobalOptions
    /// The `split` and `max-connection-per-server` each download was given, so that `getOption`
    /// lists them as asked; the manager keeps only the connections they make.
    var connectionsAsked: [DownloadID: Aria2ConnectionOptions] = [:]
    /// `changeOption` and `changeUri` calls waiting for an earlier change of the same download;
    /// a key is present while a change of that download runs.
    var optionChangeWaiters: [DownloadID: [CheckedContinuation<Void, Never>]] = [:]
    /// aria2's session ID: new for each run of the daemon.
    let sessionID: String

    package init(manager: DownloadManager, configuration: Aria2Configuration) throws(HaulError) {
        self.manager = manager
        self.configuration = configuration
        let directory = try Aria2DownloadDirectory(configuration.downloadDirectory)
        self.downloadDirectory = directory
        self.global = Aria2GlobalOptions(dir: directory.url, transfers: configuration.transfers)
        self.sessionID = (0..<40).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined()
    }

    /// The methods, in the order aria2 lists them.
    static let methodNames = [
        "aria2.addUri", "aria2.addTorrent", "aria2.getPeers", "aria2.addMetalink", "aria2.remove", "aria2.pause",
        "aria2.forcePause", "aria2.pauseAll", "aria2.forcePauseAll", "aria2.unpause", "aria2.unpauseAll",
        "aria2.forceRemove", "aria2.changePosition", "aria2.tellStatus", "aria2.getUris", "aria2.getFiles",
        "aria2.getServers", "aria2.tellActive", "aria2.tellWaiting", "aria2.tellStopped", "aria2.getOption",
        "aria2.changeUri", "aria2.changeOption", "aria2.getGlobalOption", "aria2.changeGlobalOption",
        "aria2.purgeDownloadResult", "aria2.removeDownloadResult", "aria2.getVersion", "aria2.getSessionInfo",
        "aria2.shutdown", "aria2.forceShutdown", "aria2.getGlobalStat", "aria2.saveSession",
    ]

    /// Adds aria2's methods and notifications to `table`.
    package nonisolated func register(in table: inout RPCMethodTable) {
        for name in Self.methodNames {
            table.register(name) { (parameters, _) async throws(JSONRPCError) -> JSONValue in
                try await self.call(name, parameters)
            }
        }
        for name in Aria2Notifications.names { table.registerNotification(name) }
    }

    private func call(_ name: String, _ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        switch name {
        case "aria2.addUri": return try await addUri(p)
        case "aria2.addTorrent": throw .failed("aria2.addTorrent is not supported: Haul downloads over HTTP(S) only, without BitTorrent")
        case "aria2.addMetalink": throw .failed("aria2.addMetalink is not supported: Haul does not read Metalink files")
        case "aria2.getPeers":
            // As aria2 answers for an HTTP download: no BitTorrent peers (the GID must exist).
            _ = try await download(p)
            return .array([])
        case "aria2.remove", "aria2.forceRemove": return try await remove(p)
        case "aria2.pause", "aria2.forcePause": return try await pause(p)
        case "aria2.pauseAll", "aria2.forcePauseAll": return await pauseAll()
        case "aria2.unpause": return try await unpause(p)
        case "aria2.unpauseAll": return await unpauseAll()
        case "aria2.changePosition": return try await changePosition(p)
        case "aria2.tellStatus": return try await tellStatus(p)
        case "aria2.getUris":
            let info = try await download(p)
            return Aria2Status.uris(info, servers: await manager.servers(of: info.id))
        case "aria2.getFiles":
            let info = try await download(p)
            return .array([Aria2Status.file(info, servers: await servers(of: info))])
        case "aria2.getServers": return try await getServers(p)
        case "aria2.tellActive": return try await tellActive(p)
        case "aria2.tellWaiting": return try await tellWaiting(p)
        case "aria2.tellStopped": return try await tellStopped(p)
        case "aria2.getOption": return try await getOption(p)
        case "aria2.changeUri": return try await changeUri(p)
        case "aria2.changeOption": return try await changeOption(p)
        case "aria2.getGlobalOption": return await getGlobalOption()
        case "aria2.changeGlobalOption": return try await changeGlobalOption(p)
        case "aria2.purgeDownloadResult": return try await purgeDownloadResult()
        case "aria2.removeDownloadResult": return try await removeDownloadResult(p)
        case "aria2.getVersion": return getVersion()
        case "aria2.getSessionInfo": return ["sessionId": .string(sessionID)]
        case "aria2.shutdown": return shutdown(force: false)
        case "aria2.forceShutdown": return shutdown(force: true)
        case "aria2.getGlobalStat": return await getGlobalStat()
        case "aria2.saveSession": return try await saveSession()
        default: throw .methodNotFound(name)
        }
    }

    // MARK: GIDs

    /// The download a GID names. As in aria2, a unique prefix of a GID names it too.
    func download(_ text: String) async throws(JSONRPCError) -> DownloadInfo {
        let gid = text.lowercased()
        let isHex = gid.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        guard !gid.isEmpty, gid.utf8.count <= 16, isHex else { throw .failed("Invalid GID \(text)") }
        if let id = DownloadID(gid) {
            guard let info = await manager.snapshotInFleet(id) else { throw .failed("GID \(text) is not found") }
            return info
        }
        let all = Set(DownloadState.allCases)
        let matches = await manager.downloadIDs(inStates: all).filter { $0.description.hasPrefix(gid) }
        guard matches.count <= 1 else { throw .failed("GID \(text) is not unique") }
        guard let id = matches.first, let info = await manager.snapshot(id) else { throw .failed("GID \(text) is not found") }
        return info
    }

    /// The download named by the GID that is the first parameter.
    func download(_ p: RPCParameters) async throws(JSONRPCError) -> DownloadInfo {
        try await download(try p.string(0, "gid"))
    }

    /// Runs a manager call, turning its error into aria2's shape.
    func managed<T>(_ body: () async throws(HaulError) -> T) async throws(JSONRPCError) -> T {
        do {
            return try await body()
        } catch {
            throw JSONRPCError(error)
        }
    }

    // MARK: The daemon

    func getVersion() -> JSONValue {
        ["version": .string(HaulVersion.current), "enabledFeatures": ["HTTPS", "Message Digest"]]
    }

    func shutdown(force: Bool) -> JSONValue {
        configuration.requestShutdown(force)
        return "OK"
    }

    /// aria2's session file is for unfinished downloads, with their options, coming back on the
    /// next start: Haul's store holds them always, without `--save-session`. This writes what
    /// is pending now and answers "OK" only once that write succeeded; a failed write, or a
    /// manager without a store on disk, is an error saying so.
    func saveSession() async throws(JSONRPCError) -> JSONValue {
        try await managed { () async throws(HaulError) in try await manager.saveStore() }
        return "OK"
    }
}
