/// The progress ticker: samples running transfers at `progressInterval`, smooths their speed,
/// and emits throttled progress for downloads, groups and everything. It runs only while some
/// download holds a slot.
extension DownloadManager {
    func startTickerIfNeeded() {
        guard ticker == nil, !isShutDown else { return }
        lastTick = nil
        let interval = configuration.progressInterval
        let clock = configuration.clock
        ticker = Task {
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
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
        let starved = Self.starvation(previousTick: lastTick, now: now, interval: configuration.progressInterval)
        lastTick = now
        var touchedGroups: Set<String> = []
        let running = Array(scheduler.runningHosts.keys)
        let followsProgress = hub.follows(.progress)
        for id in running {
            guard let transfer = records[id]?.details.live else { continue }
            if let starved { transfer.excuseSilence(starved, now: now) }
            if transfer.timeOutIfSilent(longerThan: configuration.readTimeout, now: now) {
                // The runner sees `timedOut` and ends the attempt as a timeout, to be retried.
                lane.stop(id)
            }
            let live = transfer.snapshot
            metrics.received(transfer.takeReceivedBytes())
            let speed = records[id]?.details.speed.sample(bytes: live.completedBytes, at: now) ?? 0
            let progress = TransferProgress(
                completedBytes: live.completedBytes,
                expectedBytes: live.expectedBytes ?? records[id]?.details.progress.expectedBytes,
                bytesPerSecond: speed)
            records[id]?.details.progress = progress
            if followsProgress { hub.emit(.progress(id, progress)) }
            if let group = records[id]?.group { touchedGroups.insert(group) }
        }
        // Sums over every member of a group (or every download): worth it only for someone
        // listening. A daemon session followed through its outbox has no subscriber.
        if hub.follows(.groupProgress) {
            for name in touchedGroups.sorted() {
                hub.emit(.groupProgress(name, groupProgress(name)))
            }
        }
        if !running.isEmpty, hub.follows(.overallProgress) { hub.emit(.overallProgress(aggregate(order))) }
        if running.isEmpty {
            ticker = nil
            lastTick = nil
        }
        return !running.isEmpty
    }

    /// How long this process went without running its own work, judged by how late the
    /// ticker's tick is: nil when it is late by a second or less. (A busy machine makes ticks
    /// a little late all the time; excusing that too would let a silent server go on for
    /// longer than the read timeout.)
    ///
    /// The read timeout is meant for a server that falls silent. A process that was not
    /// scheduled (a machine suspended and woken, or starved by other work) received nothing
    /// either, but through no fault of the server; counting that span would time out every
    /// transfer at once. So the span is not counted: each transfer's silence clock moves on
    /// by it, and a server that is really gone is still timed out one read timeout later.
    static func starvation(previousTick: ContinuousClock.Instant?, now: ContinuousClock.Instant, interval: Duration) -> Duration? {
        guard let previousTick else { return nil }
        let late = previousTick.duration(to: now) - interval
        return late > .seconds(1) ? late : nil
    }
}
