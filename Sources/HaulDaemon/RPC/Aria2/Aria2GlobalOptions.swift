import Foundation
import Haul

/// aria2's global options as Haul keeps them: the defaults for new downloads. The limits that
/// hold for all downloads (`max-concurrent-downloads`, `max-overall-download-limit`) live in
/// the manager.
struct Aria2GlobalOptions: Sendable, Hashable {
    /// The default `dir`: the download directory, or a directory inside it.
    var dir: URL
    var headers: [HeaderField] = []
    var referer: String?
    var userAgent: String?
    var allowOverwrite = false
    var autoFileRenaming = true
    var split: Int
    var maxConnectionPerServer: Int
    /// Bytes per second, 0 for no limit.
    var maxDownloadLimit: Int64

    init(dir: URL, transfers: DaemonTransferOptions = DaemonTransferOptions()) {
        self.dir = dir
        split = transfers.split
        maxConnectionPerServer = transfers.maxConnectionPerServer
        maxDownloadLimit = transfers.maxDownloadLimit
    }

    /// Takes every default that `values` sets (the directory already resolved by the caller).
    mutating func apply(_ values: Aria2OptionValues, dir resolved: URL?) {
        if let resolved { dir = resolved }
        if let headers = values.headers { self.headers = headers }
        if let referer = values.referer { self.referer = referer }
        if let userAgent = values.userAgent { self.userAgent = userAgent }
        if let allow = values.allowOverwrite { allowOverwrite = allow }
        if let rename = values.autoFileRenaming { autoFileRenaming = rename }
        if let split = values.split { self.split = split }
        if let connections = values.maxConnectionPerServer { maxConnectionPerServer = connections }
        if let limit = values.maxDownloadLimit { maxDownloadLimit = limit }
    }

    /// A new download's request: the given options over these defaults.
    func request(for url: URL, _ values: Aria2OptionValues, directory: URL) -> DownloadRequest {
        var headers = values.headers ?? self.headers
        Self.upsert(&headers, "Referer", values.referer ?? referer)
        Self.upsert(&headers, "User-Agent", values.userAgent ?? userAgent)
        var request = DownloadRequest(
            url: url, directory: directory, fileName: values.out, headers: headers,
            checksums: values.checksum.map { [$0] } ?? [],
            conflictPolicy: Self.policy(
                allowOverwrite: values.allowOverwrite ?? allowOverwrite,
                autoFileRenaming: values.autoFileRenaming ?? autoFileRenaming))
        request.split = DaemonTransferOptions.connections(
            split: values.split ?? split, maxConnectionPerServer: values.maxConnectionPerServer ?? maxConnectionPerServer)
        request.maxBytesPerSecond = Self.limit(values.maxDownloadLimit ?? maxDownloadLimit)
        return request
    }

    /// aria2's speed (0 for none) as a request's limit (nil for none).
    static func limit(_ bytesPerSecond: Int64) -> Int64? {
        bytesPerSecond > 0 ? bytesPerSecond : nil
    }

    /// An existing request with the given options changed and the rest kept.
    static func changing(_ request: DownloadRequest, _ values: Aria2OptionValues, directory: URL?) -> DownloadRequest {
        var changed = request
        if let directory { changed.directory = directory }
        if let out = values.out { changed.fileName = out }
        if let headers = values.headers { changed.headers = headers }
        upsert(&changed.headers, "Referer", values.referer)
        upsert(&changed.headers, "User-Agent", values.userAgent)
        if let checksum = values.checksum { changed.checksums = [checksum] }
        if values.allowOverwrite != nil || values.autoFileRenaming != nil {
            let current = flags(request.conflictPolicy)
            changed.conflictPolicy = policy(
                allowOverwrite: values.allowOverwrite ?? current.allowOverwrite,
                autoFileRenaming: values.autoFileRenaming ?? current.autoFileRenaming)
        }
        return changed
    }

    /// aria2's two flags as Haul's conflict policy: overwrite wins, then renaming, else fail.
    static func policy(allowOverwrite: Bool, autoFileRenaming: Bool) -> ConflictPolicy {
        allowOverwrite ? .overwrite : autoFileRenaming ? .rename : .fail
    }

    /// Haul's conflict policy as aria2's two flags (`skip` has no aria2 form; it shows as fail).
    static func flags(_ policy: ConflictPolicy) -> (allowOverwrite: Bool, autoFileRenaming: Bool) {
        switch policy {
        case .overwrite: return (true, true)
        case .rename: return (false, true)
        case .skip, .fail: return (false, false)
        }
    }

    /// Sets a header, replacing any of the same name (names compare case-insensitively) in the
    /// place of the first, so that setting the value a header has changes nothing.
    static func upsert(_ headers: inout [HeaderField], _ name: String, _ value: String?) {
        guard let value else { return }
        let key = name.lowercased()
        guard let first = headers.firstIndex(where: { $0.name.lowercased() == key }) else {
            headers.append(HeaderField(name: name, value: value))
            return
        }
        headers[first].value = value
        var index = headers.index(after: first)
        while index < headers.endIndex {
            if headers[index].name.lowercased() == key { headers.remove(at: index) } else { index += 1 }
        }
    }
}
