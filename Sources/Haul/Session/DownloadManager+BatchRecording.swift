import Foundation

/// A large batch's transaction opened before its rows are all made, so that the store's
/// writer inserts the first slices while the manager makes the next (`ArrivingWrites`).
///
/// Why: before a batch's first transfer may start, the manager makes thousands of IDs, part
/// keys, records and rows (about 30 ms for 5,000 on the project's VM), then the writer deletes
/// the downloads they replace and inserts them (about 50 ms, 70 ms on a re-run), each idle
/// while the other works; on two cores the stretch before the first request was the sum of
/// both. The batch is still accepted whole: one transaction commits every row or none, and
/// nothing of it is queued for the scheduler before that commit.
final class BatchRecording {
    /// Rows handed to the writer at a time: enough to keep it busy between two slices, few
    /// enough that the first slice reaches it within a few milliseconds.
    static let sliceRows = 500

    let arriving = ArrivingWrites()
    private let committed: Task<Result<Void, HaulError>, Never>
    let opened = ContinuousClock.now
    /// New downloads, and the earlier ones they replace, not yet handed to the writer.
    fileprivate var waiting: [DownloadID] = []
    fileprivate var waitingReplaced: [DownloadID] = []
    private var isEnded = false

    init(store: any DownloadStoring) {
        let arriving = self.arriving
        committed = Task {
            do throws(HaulError) {
                try await store.submit(.arriving(arriving))
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    /// A recording given up without its end (which the manager's code never does): its rows
    /// must not commit, and the writer must not wait for them for ever.
    deinit {
        if !isEnded { arriving.abandon() }
    }

    /// Ends the writes; the transaction's outcome is the task's.
    fileprivate func end() -> Task<Result<Void, HaulError>, Never> {
        isEnded = true
        arriving.end()
        return committed
    }
}

extension DownloadManager {
    /// A recording for a batch of `count` new downloads, when the store can take its rows as
    /// they are made and the batch is large enough to gain; nil otherwise (`persistNew` then
    /// writes the batch at once).
    func openBatchRecording(forBatchOf count: Int) -> BatchRecording? {
        guard count >= Self.bulkWriteRows, store.takesWritesAsTheyArrive else { return nil }
        return BatchRecording(store: store)
    }

    /// A new download of the batch, with the earlier downloads it replaces (deleted in the
    /// same transaction); its row goes to the writer with the next full slice.
    func handOver(_ id: DownloadID, replacing: [DownloadID], to recording: BatchRecording) {
        recording.waiting.append(id)
        recording.waitingReplaced += replacing
        if recording.waiting.count >= BatchRecording.sliceRows { handOverWaiting(recording) }
    }

    private func handOverWaiting(_ recording: BatchRecording) {
        if !recording.waitingReplaced.isEmpty {
            recording.arriving.add(.delete(recording.waitingReplaced))
            recording.waitingReplaced.removeAll(keepingCapacity: true)
        }
        guard !recording.waiting.isEmpty else { return }
        recording.arriving.add(.save(recording.waiting.compactMap { records[$0].map(storedDownload) }))
        recording.waiting.removeAll(keepingCapacity: true)
    }

    /// Hands over the last slice and the marking of the completed downloads found in use
    /// again, ends the writes and waits for the commit (`persistNew(_:recordedBy:)`).
    func commit(_ recording: BatchRecording, markingInUse inUse: (ids: [DownloadID], at: Date)?) async throws(HaulError) {
        handOverWaiting(recording)
        if let inUse { recording.arriving.add(.markInUse(inUse.ids, at: inUse.at)) }
        try await recording.end().value.get()
    }
}
