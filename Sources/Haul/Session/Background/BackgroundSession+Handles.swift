import Foundation

/// What the handles need of a background session (`SessionBackend`): waits are long polls at
/// the daemon (`haul.wait`, `haul.waitGroup`), progress is asked for at
/// `Configuration.progressInterval`. Each wait goes on through a daemon restart.
extension BackgroundSession {
    func waitUntilFinished(_ id: DownloadID) async throws(HaulError) -> DownloadInfo {
        while true {
            try checkCancellation("download \(id)")
            let info = try await call("haul.wait", identifier, id.description, waitMilliseconds, returning: RemoteDownload.self).info
            if info.state.isTerminal { return info }
        }
    }

    nonisolated func progressUpdates(of id: DownloadID) -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let task = Task {
            defer { continuation.finish() }
            for await info in self.polledStates(of: id) {
                continuation.yield(info.progress)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Events made from the download's state as it is asked for at `progressInterval`: started
    /// (running after not running), paused, resumed (queued after paused), progress while it
    /// runs, and its end.
    nonisolated func events(of id: DownloadID) -> HaulSequence<DownloadEvent> {
        let (sequence, continuation) = HaulSequence<DownloadEvent>.make()
        let task = Task {
            var last: DownloadInfo?
            for await info in self.polledStates(of: id) {
                for event in Self.changes(from: last, to: info) { continuation.yield(event) }
                last = info
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return sequence
    }

    /// What changed between two snapshots of a download, as events.
    static func changes(from old: DownloadInfo?, to new: DownloadInfo) -> [DownloadEvent] {
        if let result = new.result { return [DownloadEvent(.finished(result))] }
        var events: [DownloadEvent] = []
        switch (old?.state, new.state) {
        case (let before, .running) where before != .running:
            events.append(DownloadEvent(.started(new.id, resumedFrom: new.resumedFrom)))
        case (let before, .paused) where before != .paused:
            events.append(DownloadEvent(.paused(new.id, reason: new.error)))
        case (.paused, .queued):
            events.append(DownloadEvent(.resumed(new.id)))
        default:
            break
        }
        if new.state == .running, new.progress != old?.progress {
            events.append(DownloadEvent(.progress(new.id, new.progress)))
        }
        return events
    }

    /// The download's state every `progressInterval` until it has finished (the last one
    /// yielded is the finished state), or the daemon cannot be reached again.
    private nonisolated func polledStates(of id: DownloadID) -> AsyncStream<DownloadInfo> {
        AsyncStream { continuation in
            let task = Task {
                defer { continuation.finish() }
                while !Task.isCancelled {
                    guard let info = try? await self.info(id) else { return }
                    continuation.yield(info)
                    if info.state.isTerminal { return }
                    try? await Task.sleep(for: configuration.progressInterval)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func summary(ofGroup name: String) async throws(HaulError) -> GroupSummary {
        try await call("haul.group", identifier, name, returning: RemoteGroupSummary.self).summary
    }

    func waitUntilCompleted(group name: String) async throws(HaulError) -> GroupSummary {
        while true {
            try checkCancellation("group '\(name)'")
            let summary = try await call(
                "haul.waitGroup", identifier, name, -1, waitMilliseconds, returning: RemoteGroupSummary.self).summary
            if summary.isComplete { return summary }
        }
    }

    nonisolated func results(ofGroup name: String) -> HaulSequence<DownloadResult> {
        let (sequence, continuation) = HaulSequence<DownloadResult>.make()
        let task = Task {
            var delivered = Set<DownloadID>()
            do {
                while true {
                    try await self.checkCancellation("group '\(name)'")
                    let summary = try await self.call(
                        "haul.waitGroup", self.identifier, name, delivered.count, await self.waitMilliseconds,
                        returning: RemoteGroupSummary.self
                    ).summary
                    for result in summary.results where delivered.insert(result.id).inserted { continuation.yield(result) }
                    if summary.isComplete { break }
                }
                continuation.finish()
            } catch let error as HaulError where error.code == .waitCanceled {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return sequence
    }

    func progress(ofGroup name: String) async throws(HaulError) -> TransferProgress {
        let members = try await members(ofGroup: name)
        var total = TransferProgress(completedBytes: 0, expectedBytes: 0)
        for member in members {
            total.completedBytes += member.progress.completedBytes
            total.bytesPerSecond += member.progress.bytesPerSecond
            if let expected = member.progress.expectedBytes, let sum = total.expectedBytes {
                total.expectedBytes = sum + expected
            } else {
                total.expectedBytes = nil
            }
        }
        return total
    }

    func members(ofGroup name: String) async throws(HaulError) -> [DownloadInfo] {
        try await call("haul.groupMembers", identifier, name, returning: [RemoteDownload].self).map(\.info)
    }

    /// How long one wait may last at the daemon: the event poll's wait.
    var waitMilliseconds: Int {
        Int(configuration.eventPollWait.components.seconds * 1000)
    }

    private func checkCancellation(_ what: String) throws(HaulError) {
        if Task.isCancelled {
            throw HaulError(.waitCanceled, "the task waiting for \(what) was canceled; the download goes on")
        }
    }
}
