/// Speed limits changed while downloads run: the manager's global limit, shared by all its
/// transfers, and each download's own (both token buckets; see `TokenBucket`). A transfer
/// waiting on a limit sees a change within a fraction of a second.
extension DownloadManager {
    /// The global limit in bytes per second, nil when there is none.
    package var globalSpeedLimit: Int64? { runner.globalLimit.bytesPerSecond }

    /// Limits all transfers of this manager together to `bytesPerSecond` (nil, or less
    /// than 1, removes the limit), from now on. Starts from `Configuration.maxBytesPerSecond`;
    /// not stored: a manager opened again starts from its configuration. With a
    /// `Configuration.sharedSpeedLimiter`, this changes the limit of every manager sharing it.
    package func setGlobalSpeedLimit(_ bytesPerSecond: Int64?) {
        runner.globalLimit.setLimit(bytesPerSecond)
    }

    /// Limits one download to `bytesPerSecond` (nil, or less than 1, removes its limit), now
    /// if it is running and for every later transfer of it. Stored with the download (its
    /// request's `maxBytesPerSecond`), so it holds after a restart too.
    package func setSpeedLimit(_ bytesPerSecond: Int64?, for id: DownloadID) throws(HaulError) {
        guard records[id] != nil else { throw unknown(id) }
        let limit = bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        records[id]?.kept.maxBytesPerSecond = limit
        // A transfer between attempts keeps its own copy of the request; a running one reads
        // its limit from the `LiveTransfer` it shares with this record.
        records[id]?.details.transfer?.request.maxBytesPerSecond = limit
        records[id]?.details.live?.setSpeedLimit(limit)
        markWholeRowDirty(id)
    }
}
