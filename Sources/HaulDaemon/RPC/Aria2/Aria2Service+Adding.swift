import Foundation
import Haul

/// `aria2.addUri` and `aria2.changeUri`: what a download fetches, and from where.
extension Aria2Service {
    /// `addUri(uris[, options[, position]])` → the new GID. Every option is checked, the
    /// directory resolved and the request validated before anything is added.
    func addUri(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let uris = try distinct(p.strings(0, "uris"))
        guard let uri = uris.first else { throw .failed("URI is not provided.") }
        guard uris.count == 1 else {
            throw .failed("Haul downloads each file from one URI, and \(uris.count) were given (mirrors are not supported)")
        }
        let options = try p.optionalObject(1, "options") ?? [:]
        let position = try p.optionalInteger(2, "position")
        if let position, position < 0 { throw .failed("Position must be greater than or equal to 0.") }
        let values = try parseOptions(options, for: .newDownload)
        guard let url = URL(string: uri) else { throw .failed("'\(uri)' is not a valid URI") }
        let directory = try values.dir.map { text throws(JSONRPCError) in
            try downloadDirectory.resolve(text, relativeTo: global.dir)
        } ?? global.dir
        let request = global.request(for: url, values, directory: directory)
        let id = try await managed { () async throws(HaulError) in
            try await manager.add(request, queueIndex: position, paused: values.pause ?? false)
        }
        if values.asksForConnections { connectionsAsked[id, default: Aria2ConnectionOptions()].merge(values) }
        return .string(id.description)
    }

    /// `changeUri(gid, fileIndex, delUris, addUris[, position])` → `[deleted, added]`. Haul
    /// downloads a file from one URI, so the change must leave exactly one: replacing the URI
    /// (delete the old, add the new) is what works.
    func changeUri(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let gid = try p.string(0, "gid")
        let fileIndex = try p.integer(1, "fileIndex")
        let deletions = try p.strings(2, "delUris")
        let additions = try p.strings(3, "addUris")
        let position = try p.optionalInteger(4, "position")
        let id = try await download(gid).id
        // After any change of the same download under way, so that neither undoes the other.
        return try await changingOptions(of: id) { () async throws(JSONRPCError) in
            guard let info = await manager.info(id) else { throw .failed("GID \(gid) is not found") }
            return try await changeUri(info, fileIndex: fileIndex, deletions: deletions, additions: additions, position: position)
        }
    }

    private func changeUri(
        _ info: DownloadInfo, fileIndex: Int, deletions: [String], additions: [String], position: Int?
    ) async throws(JSONRPCError) -> JSONValue {
        guard fileIndex == 1 else { throw .failed("fileIndex is out of range") }
        guard !info.state.isTerminal else { throw .failed("No active download for GID#\(info.id)") }
        var uris = [info.request.url.absoluteString]
        var deleted = 0
        for uri in deletions {
            guard let index = uris.firstIndex(of: uri) else { continue }
            uris.remove(at: index)
            deleted += 1
        }
        let insertAt = min(max(0, position ?? uris.count), uris.count)
        uris.insert(contentsOf: additions, at: insertAt)
        let remaining = distinct(uris)
        guard remaining.count == 1, let uri = remaining.first else {
            throw .failed("Haul downloads each file from one URI; this change would leave \(remaining.count). Delete the old URI and add one new one")
        }
        guard let url = URL(string: uri) else { throw .failed("'\(uri)' is not a valid URI") }
        if url != info.request.url {
            var request = info.request
            request.url = url
            try await managed { () async throws(HaulError) in try await manager.replaceRequest(info.id, with: request) }
        }
        return [.integer(Int64(deleted)), .integer(Int64(additions.count))]
    }

    /// The strings without repeats, first occurrence first.
    func distinct(_ strings: [String]) -> [String] {
        var seen: Set<String> = []
        return strings.filter { seen.insert($0).inserted }
    }
}
