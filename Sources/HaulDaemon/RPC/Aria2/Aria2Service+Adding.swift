import Foundation
import Haul

/// `aria2.addUri` and `aria2.changeUri`: what a download fetches, and from where.
extension Aria2Service {
    /// `addUri(uris[, options[, position]])` → the new GID. Every option is checked, the
    /// directory resolved and the request validated before anything is added. Several URIs
    /// are mirrors of one file, as in aria2: the first is the request's URL, the others its
    /// mirrors, and a split download spreads its connections over all of them.
    func addUri(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let uris = try distinct(p.strings(0, "uris"))
        guard let uri = uris.first else { throw .failed("URI is not provided.") }
        let mirrors = try uris.dropFirst().map { text throws(JSONRPCError) in
            guard let mirror = URL(string: text) else { throw .failed("'\(text)' is not a valid URI") }
            return mirror
        }
        let options = try p.optionalObject(1, "options") ?? [:]
        let position = try p.optionalInteger(2, "position")
        if let position, position < 0 { throw .failed("Position must be greater than or equal to 0.") }
        let values = try parseOptions(options, for: .newDownload)
        guard let url = URL(string: uri) else { throw .failed("'\(uri)' is not a valid URI") }
        let directory = try values.dir.map { text throws(JSONRPCError) in
            try downloadDirectory.resolve(text, relativeTo: global.dir)
        } ?? global.dir
        var request = global.request(for: url, values, directory: directory)
        if !mirrors.isEmpty {
            request.mirrors = mirrors
            // aria2's `max-connection-per-server` is per server: each mirror is one more.
            request.split = DaemonTransferOptions.connections(
                split: values.split ?? global.split,
                maxConnectionPerServer: (values.maxConnectionPerServer ?? global.maxConnectionPerServer) * uris.count)
        }
        let id = try await managed { () async throws(HaulError) in
            try await manager.add(request, queueIndex: position, paused: values.pause ?? false)
        }
        if values.asksForConnections { connectionsAsked[id, default: Aria2ConnectionOptions()].merge(values) }
        return .string(id.description)
    }

    /// `changeUri(gid, fileIndex, delUris, addUris[, position])` → `[deleted, added]`, as
    /// aria2: each URI of `delUris` is removed once (where it is listed), then `addUris` are
    /// inserted at `position` of what is left (at the end without one); URIs that are not http
    /// or https are not added, and a URI is listed once (`added` counts the new ones). The first URI left is the download's URL, the others its
    /// mirrors. A running download continues at once with the new list, from its bytes.
    func changeUri(_ p: RPCParameters) async throws(JSONRPCError) -> JSONValue {
        let gid = try p.string(0, "gid")
        let fileIndex = try p.integer(1, "fileIndex")
        let deletions = try p.strings(2, "delUris")
        let additions = try p.strings(3, "addUris")
        let position = try p.optionalInteger(4, "position")
        let id = try await download(gid).id
        // After any change of the same download under way, so that neither undoes the other.
        return try await changingOptions(of: id) { () async throws(JSONRPCError) in
            guard let info = await manager.snapshot(id) else { throw .failed("GID \(gid) is not found") }
            return try await changeUri(info, fileIndex: fileIndex, deletions: deletions, additions: additions, position: position)
        }
    }

    private func changeUri(
        _ info: DownloadInfo, fileIndex: Int, deletions: [String], additions: [String], position: Int?
    ) async throws(JSONRPCError) -> JSONValue {
        guard fileIndex == 1 else { throw .failed("fileIndex is out of range") }
        guard !info.state.isTerminal else { throw .failed("No active download for GID#\(info.id)") }
        var uris = info.request.urls.map(\.absoluteString)
        var deleted = 0
        for uri in deletions {
            guard let index = uris.firstIndex(of: uri) else { continue }
            uris.remove(at: index)
            deleted += 1
        }
        let added = additions.filter { text in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return false }
            return (scheme == "http" || scheme == "https") && url.host?.isEmpty == false
        }
        let insertAt = min(max(0, position ?? uris.count), uris.count)
        let before = distinct(uris).count
        uris.insert(contentsOf: added, at: insertAt)
        let listed = distinct(uris)
        let remaining = listed.compactMap { URL(string: $0) }
        guard let url = remaining.first else {
            throw .failed("a download needs at least one URI; this change would leave none")
        }
        let mirrors = Array(remaining.dropFirst())
        if url != info.request.url || mirrors != info.request.mirrors {
            var request = info.request
            // Headers given with the download (Authorization, cookies) stay with their server.
            request.moveURL(to: url)
            request.mirrors = mirrors
            try await managed { () async throws(HaulError) in try await manager.replaceRequest(info.id, with: request) }
        }
        // Added: the URIs the list gained, a repeat (of one listed or of another added) not counted.
        return [.integer(Int64(deleted)), .integer(Int64(listed.count - before))]
    }

    /// The strings without repeats, first occurrence first.
    func distinct(_ strings: [String]) -> [String] {
        var seen: Set<String> = []
        return strings.filter { seen.insert($0).inserted }
    }
}
