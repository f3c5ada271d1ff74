import Foundation
import Haul

/// The `haul.*` methods behind the handles of `BackgroundSession`: long polls that return when
/// a download finishes or a group changes (or after the wait they were given), and a group's
/// members.
extension HaulSessionMethods {
    func waitingCall(_ name: String, _ p: RPCParameters, _ manager: DownloadManager) async throws -> JSONValue {
        switch name {
        case "haul.wait":
            // [session, id, waitMilliseconds]
            let id = try id(p)
            let wait = try waitDuration(p, at: 2)
            if await manager.waitsThroughStore {
                // In a fleet the download may end on another daemon: its row says so.
                guard let now = try await manager.waitInFleet(id, timeout: wait) else {
                    throw HaulError(.unknownDownload, "no download with ID \(id) in this session")
                }
                return try Self.json(RemoteDownload(now))
            }
            let finished = try await Self.untilTimeout(wait) { () async throws(HaulError) in try await manager.finished(id) }
            var now = finished
            if now == nil { now = await manager.snapshot(id) }
            guard let now else {
                throw HaulError(.unknownDownload, "no download with ID \(id) in this session")
            }
            return try Self.json(RemoteDownload(now))
        case "haul.waitGroup":
            // [session, group, knownFinished, waitMilliseconds]: returns once more than
            // knownFinished members have finished (knownFinished < 0: once all have), or after
            // the wait.
            let group = try p.string(1, "group")
            let known = try p.optionalInteger(2, "knownFinished") ?? -1
            let wait = try waitDuration(p, at: 3)
            // In a fleet, woken by the store when a member ends on another daemon.
            let members = try await manager.waitForMembersInFleet(ofGroup: group, knownFinished: known, timeout: wait)
            return try Self.json(RemoteGroupSummary(name: group, members: members))
        case "haul.groupMembers":
            let group = try p.string(1, "group")
            return try Self.json(try await manager.membersInFleet(ofGroup: group).map(RemoteDownload.init))
        default:
            throw JSONRPCError.methodNotFound(name)
        }
    }

    private func waitDuration(_ p: RPCParameters, at index: Int) throws(JSONRPCError) -> Duration {
        let milliseconds = try p.optionalInteger(index, "waitMilliseconds") ?? 0
        return min(Duration.milliseconds(max(0, milliseconds)), Self.maxEventWait)
    }

    /// `body`'s value, or nil when `timeout` passed first (`body` is then canceled).
    static func untilTimeout<T: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws(HaulError) -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            do {
                return try await group.next() ?? nil
            } catch let error as HaulError where error.code == .waitCanceled {
                return nil
            }
        }
    }

    static func existingPolicy(_ text: String?) throws(JSONRPCError) -> ExistingDownloadPolicy {
        switch text {
        case nil, "addAnew": return .addAnew
        case "continue": return .continue
        case let other?: throw .invalidParams("parameter 3 (ifPresent) must be \"continue\" or \"addAnew\", got \"\(other)\"")
        }
    }

    /// Adds a group as `policy` says; returns the IDs of the requests' downloads, in order
    /// (with `.continue`, the IDs of the downloads continued for those already present).
    static func add(
        _ requests: [DownloadRequest], toGroup name: String, _ policy: ExistingDownloadPolicy, in manager: DownloadManager
    ) async throws(HaulError) -> [DownloadID] {
        switch policy {
        case .addAnew: return try await manager.addMembers(requests, toGroup: name)
        case .continue: return try await manager.addContinuing(requests, toGroup: name)
        }
    }
}
