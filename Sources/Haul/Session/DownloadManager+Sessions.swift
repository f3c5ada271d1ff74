/// What a daemon's session needs beyond the in-process API: a group's summary without
/// waiting for it, the live progress of running downloads, and the client's "force quit".
extension DownloadManager {
    /// The latest progress of each running download (progress is reported, never stored).
    package func runningProgress() -> [(id: DownloadID, progress: TransferProgress)] {
        scheduler.runningHosts.keys.sorted().compactMap { id in
            records[id].map { (id, $0.details.progress) }
        }
    }

    /// What a client that deliberately gives up its session gets (`invalidateAndCancel`,
    /// like iOS's force quit): queued downloads are canceled, running ones stopped with their
    /// bytes and resume state kept (paused), paused ones left as they are. Admission is
    /// suspended meanwhile: a slot freed by a stopping transfer must not start a download this
    /// call is about to cancel or pause (one waiting for its server would send a request to a
    /// server that is gone, only to be stopped).
    public func invalidateAndCancel() async {
        admissionSuspended = true
        defer {
            admissionSuspended = false
            admitQueued()
        }
        let queued = order.filter { records[$0]?.machine.state == .queued }
        for id in queued { try? await cancel(id) }
        // Started ones, those waiting for their server without a slot included.
        let running = order.filter { records[$0]?.machine.isUnderway == true }
        for id in running { try? await pause(id) }
    }
}
