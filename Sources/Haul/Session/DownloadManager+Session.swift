import Foundation

/// `DownloadSession` in process: the public API an app uses, over the manager's own bookkeeping.
extension DownloadManager {
    /// The session's name (`"default"` unless opened with another).
    public nonisolated var identifier: String { session }

    @discardableResult
    public func add(_ request: DownloadRequest) async throws(HaulError) -> Download {
        Download(id: try await enqueue(request), session: self)
    }

    @discardableResult
    public func add(
        _ requests: [DownloadRequest], toGroup name: String, ifPresent policy: ExistingDownloadPolicy
    ) async throws(HaulError) -> DownloadGroup {
        switch policy {
        case .continue: return try await add(requests, toGroup: name, continuingExisting: true)
        case .addAnew: return try await add(requests, toGroup: name)
        }
    }

    public func download(_ id: DownloadID) throws(HaulError) -> Download {
        guard records.contains(id) else { throw unknown(id) }
        return Download(id: id, session: self)
    }

    public func group(named name: String) throws(HaulError) -> DownloadGroup {
        guard groups[name] != nil else { throw unknownGroup(name) }
        return DownloadGroup(name: name, session: self)
    }

    public func info(_ id: DownloadID) throws(HaulError) -> DownloadInfo {
        guard let info = records[id]?.info else { throw unknown(id) }
        return info
    }

    /// Stops every running transfer, keeping part files and checkpoints for the next run;
    /// queued and paused downloads stay as they are, in the store. Idempotent.
    public func close() async {
        await shutdown()
    }

    /// The session's events. Without an outbox (`Configuration.keepsEventOutbox`, off by
    /// default) there is nothing to replay: `.didFinishEvents` comes first, then every event
    /// as it happens. With one, the kept events not yet acknowledged come first, in order and
    /// with their `sequence`, as a `BackgroundSession` delivers them.
    public nonisolated func events() -> HaulSequence<DownloadEvent> {
        let live = hub.subscribe()
        let (sequence, continuation) = HaulSequence<DownloadEvent>.make()
        let task: Task<Void, Never>
        if hub.keepsOutbox {
            task = Task { await self.replayThenFollow(live, into: continuation) }
        } else {
            task = Task {
                continuation.yield(DownloadEvent(.didFinishEvents))
                for await event in live {
                    if let visible = event.downloadEvent { continuation.yield(visible) }
                }
                continuation.finish()
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return sequence
    }

    /// The app has handled `event` and every kept event before it.
    public func acknowledge(_ event: DownloadEvent) async throws(HaulError) {
        guard let sequence = event.sequence, hub.keepsOutbox else { return }
        try await acknowledgeEvents(through: sequence)
    }

    /// Kept events from the outbox (each with its sequence), then `.didFinishEvents`, then
    /// kept events as they are stored, with the live-only ones (queued, progress, retrying)
    /// from `live` in between.
    private func replayThenFollow(
        _ live: AsyncStream<ManagerEvent>, into continuation: AsyncThrowingStream<DownloadEvent, any Error>.Continuation
    ) async {
        var cursor: Int64 = 0
        var liveTask: Task<Void, Never>?
        defer { liveTask?.cancel() }
        do {
            while !Task.isCancelled, !isShutDown {
                let caughtUp = liveTask != nil
                let stored = try await storedEvents(after: cursor, waitingUpTo: caughtUp ? .seconds(30) : nil)
                for event in stored {
                    cursor = max(cursor, event.sequence)
                    if let visible = event.downloadEvent(summary: { self.groups[$0] == nil ? nil : self.summary(of: $0) }) {
                        continuation.yield(visible)
                    }
                }
                if !caughtUp, stored.isEmpty {
                    continuation.yield(DownloadEvent(.didFinishEvents))
                    liveTask = Task {
                        for await event in live where StoredEvent(event) == nil {
                            if let visible = event.downloadEvent { continuation.yield(visible) }
                        }
                    }
                }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
}

/// What the handles need of an in-process session (`SessionBackend`).
extension DownloadManager {
    func waitUntilFinished(_ id: DownloadID) async throws(HaulError) -> DownloadInfo {
        try await finished(id)
    }

    nonisolated func progressUpdates(of id: DownloadID) -> AsyncStream<TransferProgress> {
        let live = hub.subscribe()
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let task = Task {
            defer { continuation.finish() }
            guard let now = await self.snapshot(id) else { return }
            continuation.yield(now.progress)
            guard !now.state.isTerminal else { return }
            for await event in live {
                switch event {
                case .progress(id, let progress):
                    continuation.yield(progress)
                case .completed(let info) where info.id == id:
                    continuation.yield(info.progress)
                    return
                case .failed(let info) where info.id == id:
                    return
                case .canceled(id, _):
                    return
                default:
                    continue
                }
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    nonisolated func events(of id: DownloadID) -> HaulSequence<DownloadEvent> {
        let live = hub.subscribe()
        let (sequence, continuation) = HaulSequence<DownloadEvent>.make()
        let task = Task {
            defer { continuation.finish() }
            guard let now = await self.snapshot(id) else {
                continuation.finish(throwing: HaulError(.unknownDownload, "no download with ID \(id)"))
                return
            }
            if let result = now.result {
                continuation.yield(DownloadEvent(.finished(result)))
                return
            }
            for await event in live {
                guard let visible = event.downloadEvent, visible.downloadID == id else { continue }
                continuation.yield(visible)
                if case .finished = visible.kind { return }
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return sequence
    }

    package func summary(ofGroup name: String) throws(HaulError) -> GroupSummary {
        guard groups[name] != nil else { throw unknownGroup(name) }
        return summary(of: name)
    }

    func waitUntilCompleted(group name: String) async throws(HaulError) -> GroupSummary {
        let summary = try await groupCompletion(name)
        guard summary.isComplete else {
            throw HaulError(.shutdown, "the session closed before group '\(name)' completed")
        }
        return summary
    }

    nonisolated func results(ofGroup name: String) -> HaulSequence<DownloadResult> {
        let live = hub.subscribe()
        let (sequence, continuation) = HaulSequence<DownloadResult>.make()
        let task = Task {
            let now: GroupSummary
            do {
                now = try await self.summary(ofGroup: name)
            } catch {
                continuation.finish(throwing: error)
                return
            }
            var delivered = Set<DownloadID>()
            for result in now.results where delivered.insert(result.id).inserted { continuation.yield(result) }
            guard !now.isComplete else { return continuation.finish() }
            for await event in live {
                switch event {
                case .completed(let info) where info.group == name, .failed(let info) where info.group == name:
                    if let result = info.result, delivered.insert(result.id).inserted { continuation.yield(result) }
                case .canceled(let id, name) where delivered.insert(id).inserted:
                    continuation.yield(DownloadResult(id: id, group: name, outcome: .canceled))
                case .groupCompleted(let summary) where summary.name == name:
                    for result in summary.results where delivered.insert(result.id).inserted { continuation.yield(result) }
                    return continuation.finish()
                default:
                    continue
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return sequence
    }

    package func progress(ofGroup name: String) throws(HaulError) -> TransferProgress {
        guard groups[name] != nil else { throw unknownGroup(name) }
        return groupProgress(name)
    }

    package func members(ofGroup name: String) throws(HaulError) -> [DownloadInfo] {
        guard groups[name] != nil else { throw unknownGroup(name) }
        return groupMembers(name)
    }
}

extension ManagerEvent {
    /// The event as apps see it; nil for what only the tool and the daemon follow
    /// (activation, checkpoints, group and overall progress).
    var downloadEvent: DownloadEvent? {
        switch self {
        case .queued(let id): return DownloadEvent(.queued(id))
        case .started(let id, let resumedFrom, _): return DownloadEvent(.started(id, resumedFrom: resumedFrom))
        case .progress(let id, let progress): return DownloadEvent(.progress(id, progress))
        case .retrying(let id, let attempt, let delay, let error):
            return DownloadEvent(.retrying(id, attempt: attempt, delay: delay, error: error))
        case .paused(let id, let reason): return DownloadEvent(.paused(id, reason: reason))
        case .resumed(let id): return DownloadEvent(.resumed(id))
        case .completed(let info), .failed(let info): return info.result.map { DownloadEvent(.finished($0)) }
        case .canceled(let id, let group): return DownloadEvent(.finished(DownloadResult(id: id, group: group, outcome: .canceled)))
        case .groupCompleted(let summary): return DownloadEvent(.groupCompleted(summary))
        case .activated, .checkpointed, .groupProgress, .overallProgress: return nil
        }
    }
}
