import Foundation

/// The session's event stream, which outlives the daemon: replay, then `.didFinishEvents`,
/// then live events; after a lost daemon, the same again from the last event delivered.
extension BackgroundSession {
    /// Every kept, unacknowledged event in order, then `.didFinishEvents`, then new events and
    /// live progress as they come. When the daemon is lost the stream waits for it (see
    /// `Configuration.reconnectTimeout`), then continues after the last event it delivered,
    /// with another `.didFinishEvents` once it has caught up. It throws `.daemonUnavailable`
    /// only when the daemon does not come back in time.
    public nonisolated func events() -> HaulSequence<DownloadEvent> {
        let (sequence, continuation) = HaulSequence<DownloadEvent>.make()
        let task = Task { await self.follow(into: continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return sequence
    }

    private func follow(into continuation: AsyncThrowingStream<DownloadEvent, any Error>.Continuation) async {
        var cursor: Int64 = 0
        var caughtUp = false
        while !Task.isCancelled {
            do {
                // Until caught up, ask without waiting: an empty answer means done.
                let batch = try await poll(after: cursor, waiting: caughtUp)
                for stored in batch.events {
                    cursor = max(cursor, stored.sequence)
                    if let event = try await downloadEvent(stored) { continuation.yield(event) }
                }
                if !caughtUp, batch.events.isEmpty {
                    caughtUp = true
                    continuation.yield(DownloadEvent(.didFinishEvents))
                }
                if caughtUp {
                    for item in batch.progress { continuation.yield(DownloadEvent(.progress(item.id, item.progress))) }
                }
            } catch where error.code == .daemonUnavailable {
                do {
                    try await reconnect()
                    caughtUp = false
                } catch {
                    return continuation.finish(throwing: error)
                }
            } catch where error.code == .waitCanceled || Task.isCancelled {
                break
            } catch {
                return continuation.finish(throwing: error)
            }
        }
        continuation.finish()
    }

    /// A kept event as apps see it; a group's completion comes with its summary as the daemon
    /// keeps it.
    private func downloadEvent(_ stored: StoredEvent) async throws(HaulError) -> DownloadEvent? {
        guard stored.kind == .groupCompleted, let name = stored.group else {
            return stored.downloadEvent(summary: { _ in nil })
        }
        let summary: GroupSummary?
        do {
            summary = try await self.summary(ofGroup: name)
        } catch where error.code == .unknownGroup {
            summary = nil
        }
        return stored.downloadEvent(summary: { _ in summary })
    }
}
