import Foundation
import Haul
import HaulDaemon

/// The aria2 calls the client commands make, typed, over one `RPCClient`; every failure is a
/// `CommandFailure` with the message and exit status the commands print and exit with.
struct DaemonClient: Sendable {
    let rpc: RPCClient

    var endpoint: DaemonEndpoint { rpc.endpoint }

    /// How many downloads one `tellWaiting`/`tellStopped` call asks for while paging through
    /// a listing: big enough that a few calls list thousands, small enough to keep each
    /// answer well under the client's response limit.
    static let pageSize = 1000

    /// Runs `body` with a client of the daemon `options` name, and closes it afterwards.
    static func with<T>(_ options: DaemonConnectionOptions, _ body: (DaemonClient) async throws -> T) async throws -> T {
        let rpc = RPCClient(endpoint: options.endpoint, secret: options.resolvedSecret)
        do {
            let value = try await body(DaemonClient(rpc: rpc))
            await rpc.shutdown()
            return value
        } catch {
            await rpc.shutdown()
            throw error
        }
    }

    /// One call; a library error becomes the command's failure.
    func call<Result: Decodable>(
        _ method: String, _ parameters: [RPCParameter] = [], returning: Result.Type = Result.self
    ) async throws(CommandFailure) -> Result {
        do {
            return try await rpc.call(method, parameters, returning: Result.self)
        } catch {
            throw CommandFailure(daemon: error, endpoint: endpoint)
        }
    }

    // MARK: Adding and changing

    /// `aria2.addUri([url], options)` → the new download's GID.
    func addUri(_ url: String, options: Aria2AddOptions) async throws(CommandFailure) -> String {
        try await call("aria2.addUri", [RPCParameter([url]), RPCParameter(options)])
    }

    /// `haul.addResource` on the aria2 session (so that `haul ls` and the dashboard show its
    /// downloads) → the new group's name.
    func addResource(_ source: String, options: AddCommand.ResourceAddOptions) async throws(CommandFailure) -> String {
        struct Added: Decodable { let group: String }
        let name = (URL(string: source)?.lastPathComponent ?? "resource") + " " + UUID().uuidString.prefix(8).lowercased()
        let added: Added = try await call("haul.addResource", [
            RPCParameter(SessionHost.defaultSession), RPCParameter(name), RPCParameter(source), RPCParameter(options),
        ])
        return added.group
    }

    /// `pause`, `unpause`, `remove`, `forceRemove` or `removeDownloadResult` of one GID; returns
    /// the daemon's answer (the GID, or "OK").
    @discardableResult
    func act(_ method: String, on gid: String) async throws(CommandFailure) -> String {
        try await call(method, [RPCParameter(gid)])
    }

    /// `pauseAll` or `unpauseAll`.
    func actOnAll(_ method: String) async throws(CommandFailure) {
        let _: String = try await call(method)
    }

    // MARK: Reading

    func tellStatus(_ gid: String, keys: [String]? = nil) async throws(CommandFailure) -> Aria2Entry {
        try await call("aria2.tellStatus", [RPCParameter(gid)] + (keys.map { [RPCParameter($0)] } ?? []))
    }

    func tellActive(keys: [String]) async throws(CommandFailure) -> [Aria2Entry] {
        try await call("aria2.tellActive", [RPCParameter(keys)])
    }

    func tellWaiting(offset: Int, count: Int, keys: [String]) async throws(CommandFailure) -> [Aria2Entry] {
        try await call("aria2.tellWaiting", [RPCParameter(offset), RPCParameter(count), RPCParameter(keys)])
    }

    func tellStopped(offset: Int, count: Int, keys: [String]) async throws(CommandFailure) -> [Aria2Entry] {
        try await call("aria2.tellStopped", [RPCParameter(offset), RPCParameter(count), RPCParameter(keys)])
    }

    func globalStat() async throws(CommandFailure) -> Aria2GlobalStat {
        try await call("aria2.getGlobalStat")
    }

    /// Every download: active, then waiting (queued, then paused), then stopped, paging through
    /// the long lists.
    func allDownloads(keys: [String] = Aria2Entry.listKeys) async throws(CommandFailure) -> [Aria2Entry] {
        var entries = try await tellActive(keys: keys)
        entries += try await paged { offset, count throws(CommandFailure) in try await tellWaiting(offset: offset, count: count, keys: keys) }
        entries += try await paged { offset, count throws(CommandFailure) in try await tellStopped(offset: offset, count: count, keys: keys) }
        // A download that moved between lists while they were read shows up once, in the
        // list read last (the most recent state).
        var seen: Set<String> = []
        return entries.reversed().filter { seen.insert($0.gid).inserted }.reversed()
    }

    /// Reads pages until one comes back short.
    private func paged(
        _ page: (_ offset: Int, _ count: Int) async throws(CommandFailure) -> [Aria2Entry]
    ) async throws(CommandFailure) -> [Aria2Entry] {
        var all: [Aria2Entry] = []
        while true {
            let next = try await page(all.count, Self.pageSize)
            all += next
            if next.count < Self.pageSize { return all }
        }
    }
}
