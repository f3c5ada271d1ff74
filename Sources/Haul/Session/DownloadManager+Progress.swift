/// The progress ticker: samples running transfers at `progressInterval`, smooths their speed,
/// and emits throttled progress for downloads, groups and everything. It runs only while some
/// download holds a slot.
extension DownloadManager {
    func startTickerIfNeeded() {
        guard ticker == nil, !isShutDown else { return }
        let interval = configuration.progressInterval
        ticker = Task {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                guard self.tick() else { return }
            }
        }
    }

    /// Emits one round of progress. Returns false (and forgets the ticker) when idle.
    ///
    /// Only running downloads are visited (at most the concurrency limit), and records are
    /// changed in place: with thousands queued, a tick must not copy every record.
    func tick() -> Bool {
        let now = ContinuousClock.now
        var touchedGroups: Set<String> = []
        let running = Array(scheduler.runningHosts.keys)
        for id in running {
            guard let transfer = records[id]?.details.live else { continue }
            if transfer.timeOutIfSilent(longerThan: configuration.readTimeout, now: now) {
                // The runner sees `timedOut` and ends the attempt as a timeout, to be retried.
                records[id]?.details.task?.cancel()
            }
            let live = transfer.snapshot
            let speed = records[id]?.details.speed.sample(bytes: live.completedBytes, at: now) ?? 0
            let progress = TransferProgress(
                completedBytes: live.completedBytes,
                expectedBytes: live.expectedBytes ?? records[id]?.details.progress.expectedBytes,
                bytesPerSecond: speed)
            records[id]?.details.progress = progress
            hub.emit(.progress(id, progress))
            if let group = records[id]?.group { touchedGroups.insert(group) }
        }
        // Sums over every member of a group (or every download): worth it only for someone
        // listening. A daemon session followed through its outbox has no subscriber.
        if hub.hasSubscribers {
            for name in touchedGroups.sorted() {
                hub.emit(.groupProgress(name, groupProgress(name)))
            }
            if !running.isEmpty { hub.emit(.overallProgress(aggregate(order))) }
        }
        if running.isEmpty {
            ticker = nil
        }
        return !running.isEmpty
    }
}
