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
    func tick() -> Bool {
        let now = ContinuousClock.now
        var touchedGroups: Set<String> = []
        var anyActive = false
        for (id, record) in records where record.machine.holdsSlot {
            anyActive = true
            var updated = record
            guard let live = record.live?.snapshot else { continue }
            let speed = updated.speed.sample(bytes: live.completedBytes, at: now)
            let progress = TransferProgress(
                completedBytes: live.completedBytes,
                expectedBytes: live.expectedBytes ?? record.info.progress.expectedBytes,
                bytesPerSecond: speed)
            updated.info.progress = progress
            records[id] = updated
            hub.emit(.progress(id, progress))
            if let group = record.info.group { touchedGroups.insert(group) }
        }
        for name in touchedGroups.sorted() {
            hub.emit(.groupProgress(name, groupProgress(name)))
        }
        if anyActive || !touchedGroups.isEmpty {
            hub.emit(.overallProgress(aggregate(order)))
        }
        if !anyActive { ticker = nil }
        return anyActive
    }
}
