import Foundation
import Haul

/// `haul.overview(session, offset?, limit?)`: what the dashboard shows of one session, in one
/// answer of bounded size however many downloads the session holds; and
/// `haul.groupProgress(session, groups)`, the progress of a few groups (resources).
///
/// The answer has the session's totals (downloads per state, bytes, speed), its groups with
/// their progress (at most `maxGroups`, by name; `groupCount` tells how many there are), and
/// a window of its downloads (`offset`, at most `maxWindow` of them, in the order they were
/// added) as `RemoteDownload`s. States are aria2's words, as in the rest of the dashboard.
/// Only sessions the daemon has open can be asked for: asking never opens or creates one.
/// In a fleet the totals, groups and window are the fleet's, read from the shared store
/// (bytes of running downloads as of their last checkpoint), and the speeds this daemon's.
struct DashboardSessionMethods: Sendable {
    let host: SessionHost
    static let maxWindow = 500
    static let maxGroups = 200

    func register(in table: inout RPCMethodTable) {
        table.register("haul.overview") { (parameters, _) async throws(JSONRPCError) -> JSONValue in
            try await self.overview(parameters)
        }
        table.register("haul.groupProgress") { (parameters, _) async throws(JSONRPCError) -> JSONValue in
            try await self.groupProgress(parameters)
        }
    }

    /// `haul.groupProgress(session, [group…])`: for each group named (at most `maxGroups`), its
    /// members by outcome and its bytes, so that the dashboard can show a resource added with
    /// `haul.addResource` (a playlist, a Metalink document) as one row with its progress,
    /// whichever window of its files the downloads table shows. A group that does not exist
    /// is left out. Costs the named groups' members, not the session's.
    private func groupProgress(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let session = try p.string(0, "session")
        let names = try p.strings(1, "groups")
        guard names.count <= Self.maxGroups else { throw .invalidParams("at most \(Self.maxGroups) groups at once") }
        let manager = try await openManager(session)
        var answer: [JSONValue] = []
        for name in Set(names).sorted() {
            // In a fleet, the members' rows with this daemon's own view of those it holds.
            guard let members = try? await manager.membersInFleet(ofGroup: name) else { continue }
            let count = { (state: DownloadState) in Int64(members.filter { $0.state == state }.count) }
            answer.append(.object([
                "name": .string(name),
                "total": .integer(Int64(members.count)),
                "completed": .integer(count(.completed)),
                "failed": .integer(count(.failed)),
                "canceled": .integer(count(.canceled)),
                "completedBytes": .integer(members.reduce(0) { $0 + $1.progress.completedBytes }),
                "expectedBytes": .integer(members.reduce(0) { $0 + ($1.progress.expectedBytes ?? 0) }),
                "bytesPerSecond": .integer(Int64(members.reduce(0) { $0 + $1.progress.bytesPerSecond })),
            ]))
        }
        return .array(answer)
    }

    private func overview(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let session = try p.string(0, "session")
        let offset = max(0, try p.optionalInteger(1, "offset") ?? 0)
        let limit = min(max(0, try p.optionalInteger(2, "limit") ?? 50), Self.maxWindow)
        let manager = try await openManager(session)
        // Totals from each download's state and progress only; whole infos for the window.
        var totals = Tally()
        var groups: [String: Tally] = [:]
        let window: [RemoteDownload]
        if let tally = await manager.tallyInFleet(), let fleetWindow = await manager.windowInFleet(offset: offset, limit: limit) {
            // In a fleet: every daemon's downloads, from the store; speeds are this daemon's.
            for entry in tally {
                totals.add(entry)
                if let group = entry.group { groups[group, default: Tally()].add(entry) }
            }
            for brief in await manager.briefs() where brief.state == .running {
                totals.bytesPerSecond += brief.progress.bytesPerSecond
                if let group = brief.group { groups[group]?.bytesPerSecond += brief.progress.bytesPerSecond }
            }
            window = fleetWindow.map(RemoteDownload.init)
        } else {
            for brief in await manager.briefs() {
                totals.add(brief)
                if let group = brief.group { groups[group, default: Tally()].add(brief) }
            }
            window = await manager.downloads(offset: offset, limit: limit).map(RemoteDownload.init)
        }
        let shownGroups = groups.keys.sorted().prefix(Self.maxGroups).map { name in
            var entry = groups[name]!.json
            entry["name"] = .string(name)
            return JSONValue.object(entry)
        }
        var answer = totals.json
        answer["session"] = .string(session)
        answer["groupCount"] = .integer(Int64(groups.count))
        answer["groups"] = .array(shownGroups)
        answer["offset"] = .integer(Int64(offset))
        answer["downloads"] = try HaulSessionMethods.json(Array(window))
        return .object(answer)
    }

    /// Counts and bytes of a set of downloads.
    private struct Tally {
        var states: [String: Int64] = [:]
        var count: Int64 = 0
        var completedBytes: Int64 = 0
        var expectedBytes: Int64 = 0
        var bytesPerSecond: Double = 0

        mutating func add(_ brief: DownloadBrief) {
            count += 1
            states[Aria2Status.name(brief.state), default: 0] += 1
            completedBytes += brief.progress.completedBytes
            expectedBytes += brief.progress.expectedBytes ?? 0
            if brief.state == .running { bytesPerSecond += brief.progress.bytesPerSecond }
        }

        /// The store's count of one group's downloads in one state (in a fleet).
        mutating func add(_ tally: SessionTally) {
            count += tally.count
            states[Aria2Status.name(tally.state), default: 0] += tally.count
            completedBytes += tally.completedBytes
            expectedBytes += tally.expectedBytes
        }

        var json: [String: JSONValue] {
            [
                "total": .integer(count),
                "states": .object(states.mapValues(JSONValue.integer)),
                "completedBytes": .integer(completedBytes),
                "expectedBytes": .integer(expectedBytes),
                "bytesPerSecond": .integer(Int64(bytesPerSecond)),
            ]
        }
    }

    /// The manager of the open session `session`; an error naming it when there is none.
    private func openManager(_ session: String) async throws(JSONRPCError) -> DownloadManager {
        guard await host.sessionNames.contains(session) else {
            throw .failed("no open session named '\(session)'")
        }
        do {
            return try await host.manager(for: session)
        } catch {
            throw JSONRPCError(error)
        }
    }
}
