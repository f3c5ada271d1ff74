import Foundation
import Haul

/// The `haul.*` JSON-RPC methods: what aria2 lacks and `BackgroundSession` needs. Sessions by
/// identifier, whole groups in one call, the event outbox (read from a cursor with a long
/// poll, acknowledge), and `invalidateAndCancel`.
///
/// Every method names its session first (after the secret); a session's downloads are
/// reached only through it, so one client cannot see or touch another session's downloads.
/// Parameters and results are the JSON forms of Haul's Codable types (`DownloadRequest`,
/// `SessionSettings`, `RemoteDownload`, `StoredEvent`, `RemoteEventBatch`); in parameters
/// only the required keys must be written (`docs/haul-rpc.md`), and a value that does not fit
/// is refused in one sentence naming the field (`RPCParameters.decoded`).
///
/// Over TCP the directories requests name, and files deleted, are confined to the daemon's
/// download directories (`DirectoryConfinement`); over the unix socket they are not.
struct HaulSessionMethods: Sendable {
    let host: SessionHost
    let confinement: DirectoryConfinement
    /// The longest a `haul.events` call may wait for new events.
    static let maxEventWait: Duration = .seconds(60)
    /// The most requests one `haul.addGroup` may carry (bounded further by the request size).
    static let maxBatch = 100_000

    static let names = [
        "haul.attach", "haul.sessions", "haul.add", "haul.addGroup", "haul.list", "haul.status",
        "haul.pause", "haul.resume", "haul.cancel", "haul.remove", "haul.group", "haul.events",
        "haul.acknowledge", "haul.invalidateAndCancel", "haul.wait", "haul.waitGroup", "haul.groupMembers",
        "haul.addResource",
    ]

    func register(in table: inout RPCMethodTable) {
        for name in Self.names {
            table.register(name) { (parameters, origin) async throws(JSONRPCError) -> JSONValue in
                try await self.call(name, parameters, origin.transport)
            }
        }
    }

    private func call(_ name: String, _ p: RPCParameters, _ transport: RPCOrigin.Transport) async throws(JSONRPCError) -> JSONValue {
        if name == "haul.sessions" { return try Self.json(await host.sessionNames) }
        let session = try p.string(0, "session")
        if name == "haul.addResource" {
            do {
                let options: ResourceMethod.Options = try p.optionalDecoded(3, "options") ?? ResourceMethod.Options()
                return try await ResourceMethod(host: host, confinement: confinement).add(
                    session: session, group: try p.string(1, "group"), source: try p.string(2, "source"), options: options, over: transport)
            } catch let error as JSONRPCError {
                throw error
            } catch {
                throw JSONRPCError(Self.haulError(error))
            }
        }
        do {
            let settings: SessionSettings? = name == "haul.attach" ? try p.optionalDecoded(1, "settings") : nil
            let manager = try await host.manager(for: session, settings: settings)
            return try await call(name, p, manager, transport)
        } catch let error as JSONRPCError {
            throw error
        } catch {
            throw JSONRPCError(Self.haulError(error))
        }
    }

    private func call(
        _ name: String, _ p: RPCParameters, _ manager: DownloadManager, _ transport: RPCOrigin.Transport
    ) async throws -> JSONValue {
        switch name {
        case "haul.attach", "haul.list":
            // In a fleet, what other daemons run or ended shown from the store.
            let all = await manager.downloadsInFleet()
            return try Self.json(all.map(RemoteDownload.init))
        case "haul.add":
            let request = try p.decoded(1, "request", as: DownloadRequest.self)
            let confined = try confinement.confine([request], over: transport)
            return try Self.json(try await manager.enqueue(confined[0]))
        case "haul.addGroup":
            let group = try p.string(1, "group")
            let requests = try await p.decodedArray(2, "requests", of: DownloadRequest.self, plain: DownloadRequest.plain)
            guard requests.count <= Self.maxBatch else {
                throw JSONRPCError.invalidParams("at most \(Self.maxBatch) requests in one call, got \(requests.count)")
            }
            let confined = try confinement.confine(requests, over: transport)
            let policy = try Self.existingPolicy(p.optionalString(3, "ifPresent"))
            return try Self.json(try await Self.add(confined, toGroup: group, policy, in: manager))
        case "haul.status":
            return try Self.json(RemoteDownload(try await known(manager, p)))
        case "haul.pause":
            try await manager.pause(try id(p))
            return "OK"
        case "haul.resume":
            try await manager.resumeThroughFleet(try id(p))
            return "OK"
        case "haul.cancel":
            try await manager.cancel(try id(p))
            return "OK"
        case "haul.remove":
            let deletingFile = p[2].flatMap { if case .bool(let value) = $0 { value } else { nil } } ?? false
            if deletingFile, transport == .tcp {
                let info = try await known(manager, p)
                guard confinement.mayDelete(in: info.request.directory, over: transport) else {
                    throw JSONRPCError.failed("the file of \(info.id) is outside the directories this daemon writes to for clients over TCP; remove it without deleting the file, or over the unix socket")
                }
            }
            try await manager.remove(try id(p), deletingFile: deletingFile)
            return "OK"
        case "haul.group":
            let name = try p.string(1, "group")
            return try Self.json(RemoteGroupSummary(name: name, members: try await manager.membersInFleet(ofGroup: name)))
        case "haul.wait", "haul.waitGroup", "haul.groupMembers":
            return try await waitingCall(name, p, manager)
        case "haul.events":
            let after = Int64(try p.optionalInteger(1, "after") ?? 0)
            let waitMilliseconds = try p.optionalInteger(2, "waitMilliseconds") ?? 0
            let limit = min(max(try p.optionalInteger(3, "limit") ?? 1000, 1), 10_000)
            let wait = min(Duration.milliseconds(max(0, waitMilliseconds)), Self.maxEventWait)
            let events = try await manager.storedEventTexts(after: after, limit: limit, waitingUpTo: wait)
            let progress = await manager.runningProgress().map { RemoteProgress(id: $0.id, progress: $0.progress) }
            return try Self.eventBatch(events, progress: progress)
        case "haul.acknowledge":
            try await manager.acknowledgeEvents(through: Int64(try p.integer(1, "through")))
            return "OK"
        case "haul.invalidateAndCancel":
            await manager.invalidateAndCancel()
            return "OK"
        default:
            throw JSONRPCError.methodNotFound(name)
        }
    }

    func id(_ p: RPCParameters) throws(JSONRPCError) -> DownloadID {
        let text = try p.string(1, "id")
        guard let id = DownloadID(text) else { throw .invalidParams("'\(text)' is not a download ID (16 hex characters)") }
        return id
    }

    private func known(_ manager: DownloadManager, _ p: RPCParameters) async throws -> DownloadInfo {
        let id = try id(p)
        guard let info = await manager.snapshotInFleet(id) else { throw JSONRPCError.failed("no download with ID \(id) in this session") }
        return info
    }

    static func json(_ value: some Encodable) throws(JSONRPCError) -> JSONValue {
        do {
            return try JSONValueParser.parse(JSONEncoder().encode(value))
        } catch {
            throw .failed("could not encode the result: \(error)")
        }
    }

    /// The answer to `haul.events`, `RemoteEventBatch`'s JSON form, built from the events'
    /// JSON as the store keeps it: each is `StoredEvent`'s own encoding, so only its sequence
    /// is set (in the text itself, `StoredEventText.answerText`), and no event is decoded and
    /// encoded again.
    static func eventBatch(_ events: [StoredEventText], progress: [RemoteProgress]) throws(JSONRPCError) -> JSONValue {
        var values: [JSONValue] = []
        values.reserveCapacity(events.count)
        for event in events {
            if let text = event.answerText {
                values.append(.written(text))
                continue
            }
            guard case .object(var members)? = try? JSONValueParser.parse(event.payload) else {
                throw .failed("event \(event.sequence) kept in the download store is not a JSON object")
            }
            members["sequence"] = .integer(event.sequence)
            values.append(.object(members))
        }
        return .object(["events": .array(values), "progress": try json(progress)])
    }

    private static func haulError(_ error: any Error) -> HaulError {
        (error as? HaulError) ?? HaulError(.invalidRequest, "\(error)")
    }
}
