import Foundation

/// One download of a session: its ID, a fresh snapshot, its progress and events, and its
/// result to `await`.
///
/// ```swift
/// let download = try await session.add(DownloadRequest(url: videoURL, directory: movies))
/// let bar = Task { for await progress in download.progress { show(progress.fractionCompleted) } }
/// let file = try await download.value          // the placed file, or a thrown HaulError
/// bar.cancel()
/// ```
///
/// A handle is a small value naming the download in its session: copies are the same handle,
/// and `DownloadSession.download(_:)` makes one again from the ID (after a restart, too).
public struct Download: Sendable, Hashable, Identifiable {
    /// The download's identity in its session (not its URL, which redirects change).
    public let id: DownloadID
    let session: any SessionBackend

    init(id: DownloadID, session: any SessionBackend) {
        self.id = id
        self.session = session
    }

    /// A snapshot of the download now.
    public func info() async throws(HaulError) -> DownloadInfo {
        try await session.info(id)
    }

    /// The placed file, once the download has completed: waits for it (through pauses and
    /// retries), and returns at once if it has. Throws the download's error when it failed,
    /// `.canceled` when it was canceled, `.waitCanceled` when the awaiting task is canceled
    /// (the download goes on), `.shutdown` when the session closes first.
    public var value: DownloadedFile {
        get async throws(HaulError) {
            let result = try await self.result
            switch result.outcome {
            case .completed(let file): return file
            case .failed(let error): throw error
            case .canceled: throw HaulError(.canceled, "download \(id) was canceled")
            }
        }
    }

    /// How the download ended, whichever way: waits as `value` does, but returns a failure or
    /// a cancellation instead of throwing it.
    public var result: DownloadResult {
        get async throws(HaulError) {
            let info = try await session.waitUntilFinished(id)
            guard let result = info.result else {
                throw HaulError(.shutdown, "the session closed before download \(id) finished")
            }
            return result
        }
    }

    /// The download's progress as it changes (throttled), ending when it finishes or the
    /// iterating task is canceled.
    public var progress: AsyncStream<TransferProgress> {
        session.progressUpdates(of: id)
    }

    /// The events about this download from now on (started, progress, paused, resumed,
    /// finished, …), ending when it finishes.
    public var events: HaulSequence<DownloadEvent> {
        session.events(of: id)
    }

    /// Stops the download, keeping its bytes; returns once it has stopped.
    public func pause() async throws(HaulError) { try await session.pause(id) }

    /// Queues the paused or failed download again.
    public func resume() async throws(HaulError) { try await session.resume(id) }

    /// Stops the download for good and deletes its part file.
    public func cancel() async throws(HaulError) { try await session.cancel(id) }

    public static func == (lhs: Download, rhs: Download) -> Bool {
        lhs.id == rhs.id && lhs.session === rhs.session
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
