/// Callers waiting for a download to finish or a group to complete, each under a key of its
/// own so that a wait whose task is canceled can be taken out and answered alone.
///
/// A value type: the manager owns one and is the only one to change it.
struct WaitBook {
    typealias DownloadWaiter = CheckedContinuation<Result<DownloadInfo, HaulError>, Never>
    typealias GroupWaiter = CheckedContinuation<Result<GroupSummary, HaulError>, Never>

    private enum Target {
        case download(DownloadID)
        case group(String)
    }

    private var nextKey: UInt64 = 0
    private var targets: [UInt64: Target] = [:]
    private var downloads: [DownloadID: [UInt64: DownloadWaiter]] = [:]
    private var groups: [String: [UInt64: GroupWaiter]] = [:]

    /// A key for the next wait.
    mutating func newKey() -> UInt64 {
        nextKey += 1
        return nextKey
    }

    mutating func add(_ waiter: DownloadWaiter, for id: DownloadID, key: UInt64) {
        targets[key] = .download(id)
        downloads[id, default: [:]][key] = waiter
    }

    mutating func add(_ waiter: GroupWaiter, for name: String, key: UInt64) {
        targets[key] = .group(name)
        groups[name, default: [:]][key] = waiter
    }

    /// Answers the wait under `key` with `error`, if it still waits.
    mutating func fail(_ key: UInt64, with error: HaulError) {
        switch targets.removeValue(forKey: key) {
        case .download(let id):
            downloads[id]?.removeValue(forKey: key)?.resume(returning: .failure(error))
            if downloads[id]?.isEmpty == true { downloads[id] = nil }
        case .group(let name):
            groups[name]?.removeValue(forKey: key)?.resume(returning: .failure(error))
            if groups[name]?.isEmpty == true { groups[name] = nil }
        case nil:
            break
        }
    }

    /// Whether anyone waits for the download.
    func isWaited(_ id: DownloadID) -> Bool { downloads[id] != nil }

    /// Answers everyone waiting for the download.
    mutating func resolve(_ id: DownloadID, with info: DownloadInfo) {
        guard let waiting = downloads.removeValue(forKey: id) else { return }
        for (key, waiter) in waiting {
            targets[key] = nil
            waiter.resume(returning: .success(info))
        }
    }

    /// Whether anyone waits for the group.
    func isWaited(group name: String) -> Bool { groups[name] != nil }

    /// Answers everyone waiting for the group.
    mutating func resolve(group name: String, with result: Result<GroupSummary, HaulError>) {
        guard let waiting = groups.removeValue(forKey: name) else { return }
        for (key, waiter) in waiting {
            targets[key] = nil
            waiter.resume(returning: result)
        }
    }

    /// The downloads and groups anyone waits for (at shutdown, to answer them all).
    var waitedDownloads: [DownloadID] { Array(downloads.keys) }
    var waitedGroups: [String] { Array(groups.keys) }
}
