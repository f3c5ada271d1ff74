import Foundation

/// Reading a session cheaply, for the daemon's listings and counts (aria2's `tellStatus`,
/// `tellActive`, `getGlobalStat`, the dashboard): counts and pages without building every
/// download's `DownloadInfo`.
extension DownloadManager {
    /// How many downloads are in each state, and the speed of those running.
    package struct StateCounts: Sendable, Hashable {
        package var queued = 0
        package var running = 0
        package var paused = 0
        package var completed = 0
        package var failed = 0
        package var canceled = 0
        /// Sum of the smoothed speeds of running downloads, in bytes per second.
        package var bytesPerSecond: Double = 0
    }

    /// Counts downloads by state (only those in `shown`, when given), in one pass and without
    /// copying their infos.
    package func stateCounts(of shown: Set<DownloadID>? = nil) -> StateCounts {
        var counts = StateCounts()
        records.scan { id, _, state, _, progress in
            if let shown, !shown.contains(id) { return }
            switch state {
            case .queued: counts.queued += 1
            case .running:
                counts.running += 1
                counts.bytesPerSecond += progress.bytesPerSecond
            case .paused: counts.paused += 1
            case .completed: counts.completed += 1
            case .failed: counts.failed += 1
            case .canceled: counts.canceled += 1
            }
        }
        return counts
    }

    /// The IDs of downloads in any of `states`, in the order they were added.
    package func downloadIDs(inStates states: Set<DownloadState>) -> [DownloadID] {
        // Added order is position order; only the matches are sorted.
        var found: [(position: Int64, id: DownloadID)] = []
        records.scan { id, position, state, _, _ in
            if states.contains(state) { found.append((position, id)) }
        }
        return found.sorted { $0.position < $1.position }.map(\.id)
    }

    /// State, group and progress of every download, in no particular order: what totals per
    /// state or per group need, without building each download's `DownloadInfo`.
    package func briefs() -> [DownloadBrief] {
        var briefs: [DownloadBrief] = []
        briefs.reserveCapacity(records.count)
        records.scan { id, _, state, group, progress in
            briefs.append(DownloadBrief(id: id, state: state, group: group, progress: progress))
        }
        return briefs
    }

    /// Infos of the downloads from `offset` (in the order they were added), at most `limit`:
    /// a window of a listing, at a cost that follows the offset and the window.
    package func downloads(offset: Int, limit: Int) -> [DownloadInfo] {
        var skipped = 0
        var window: [DownloadInfo] = []
        for id in order where window.count < limit && records.contains(id) {
            // An info is built only for the window, not for the downloads before it.
            if skipped < offset {
                skipped += 1
            } else if let info = records[id]?.info {
                window.append(info)
            }
        }
        return window
    }

    /// Infos of the given downloads, in the given order; unknown IDs are skipped. One call for
    /// a page of a listing, instead of one `info(_:)` per download.
    package func infos(_ ids: [DownloadID]) -> [DownloadInfo] {
        ids.compactMap { records[$0]?.info }
    }
}
