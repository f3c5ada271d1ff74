import Foundation

extension DownloadManager {
    /// What `compactStore` did.
    package struct Compaction: Sendable, Hashable {
        /// Finished downloads deleted, over every session.
        package var downloadsDeleted: Int
        /// The store's size on disk (database and write-ahead log) before and after.
        package var bytesBefore: Int64
        package var bytesAfter: Int64
    }

    /// Applies `retention` to every session of the store in `stateDirectory` (finished
    /// downloads beyond its bound or age, and unacknowledged events beyond `maxKeptEvents`),
    /// then rebuilds the file without its free pages. Safe while other processes use the
    /// store: they wait for it (a managers already open keeps showing what it loaded).
    package static func compactStore(stateDirectory: URL, retention: Retention) async throws(HaulError) -> Compaction {
        let store = try DownloadStore.shared(directory: stateDirectory)
        let before = await store.sizeOnDisk()
        let deleted = try await store.compact(retention: retention, maxEvents: retention.maxKeptEvents)
        return Compaction(downloadsDeleted: deleted, bytesBefore: before, bytesAfter: await store.sizeOnDisk())
    }
}

extension DownloadStore {
    /// Bytes of the database file and its write-ahead log (0 in memory).
    func sizeOnDisk() async -> Int64 {
        guard let path else { return 0 }
        return [path, path + "-wal"].reduce(0) { total, file in
            total + (SystemCalls.describe(file)?.size ?? 0)
        }
    }
}
