import Foundation

extension DownloadManager {
    /// One download as the manager holds it.
    ///
    /// Kept small on purpose: a backlog of 100,000 queued downloads is normal, and each costs
    /// what this struct costs. What only a started (or restored, failed, finished) download
    /// has lives in `details`, out of line and allocated on first write, so a fresh queued
    /// download is its request, its state and a few numbers.
    struct Record {
        let id: DownloadID
        var kept: KeptRequest
        var group: String?
        var machine = DownloadStateMachine()
        var partKey: PartKey
        /// Shared with every download of the same host (see `DownloadManager.internedHost`).
        var host: String
        /// Enqueue order in the store.
        let position: Int64
        /// When the download counts as added, for the age rule (`Retention.maxAge`): when it
        /// was made, or when a request made again last found it in use (`StoreWrite.markInUse`).
        var createdAt: Date
        /// Counted as finished by its group (completed, failed or canceled).
        var isFinished = false
        private var detailsBox: DetailsBox?

        init(id: DownloadID, request: DownloadRequest, group: String?, partKey: PartKey, host: String, position: Int64, createdAt: Date) {
            self.init(id: id, kept: KeptRequest(request), group: group, partKey: partKey, host: host, position: position, createdAt: createdAt)
        }

        /// A record of a request kept already (a stored row's).
        init(id: DownloadID, kept: KeptRequest, group: String?, partKey: PartKey, host: String, position: Int64, createdAt: Date) {
            self.id = id
            self.kept = kept
            self.group = group
            self.partKey = partKey
            self.host = host
            self.position = position
            self.createdAt = createdAt
        }

        /// Copy-on-write, like a stored property: a copy of a record never sees changes made
        /// through another copy.
        var details: RecordDetails {
            get { detailsBox?.value ?? RecordDetails() }
            _modify {
                if detailsBox == nil {
                    detailsBox = DetailsBox(RecordDetails())
                } else if !isKnownUniquelyReferenced(&detailsBox!) {
                    detailsBox = DetailsBox(detailsBox!.value)
                }
                yield &detailsBox!.value
            }
        }

        /// The details' progress without copying the details.
        var progress: TransferProgress { detailsBox?.value.progress ?? TransferProgress() }

        /// The public view, built when asked for.
        var info: DownloadInfo {
            let details = self.details
            var info = DownloadInfo(id: id, request: kept.request(reusing: details.parsedURL), group: group)
            info.state = machine.publicState
            info.progress = details.progress
            info.finalURL = details.finalURL
            info.fileURL = details.fileURL
            info.skipped = details.skipped
            info.verifiedChecksums = details.verifiedChecksums
            info.error = details.error
            info.attempts = details.attempts
            info.isWaitingToRetry = machine.isWaitingToRetry
            info.resumedFrom = details.resumedFrom
            return info
        }
    }

    /// What a download gains once it starts or is restored from the store.
    struct RecordDetails {
        var progress = TransferProgress()
        var finalURL: URL?
        var fileURL: URL?
        var skipped = false
        var verifiedChecksums: [Checksum] = []
        var error: HaulError?
        var attempts = 0
        var resumedFrom: Int64 = 0
        /// The store holds the download as completed at its file already: written with its
        /// placement intent, and the rename gave the path expected then.
        var completionStored = false
        /// What the store must know to continue or recognise the download in a new process.
        var durable = DurableFields()
        /// Nil while a transfer task owns it. Out of line (`OutOfLine`): it is nil for most
        /// records, and the largest of their fields.
        @OutOfLine var transfer: TransferState? = nil
        var live: LiveTransfer?
        /// `kept.urlText` as its transfer parsed it, while the transfer runs: the download is
        /// then asked for whole (its `completed` event, a snapshot). Here, not in the kept
        /// request, so that a queued download does not carry it.
        var parsedURL: URL?
        var speed = SpeedMeter()
        var retryTimer: Task<Void, Never>?
        /// The request that replaces the current one once the running transfer has stopped
        /// (`replaceRequest` on a running download).
        @OutOfLine var replacement: PendingReplacement? = nil
        /// Callers of pause/cancel waiting for the transfer to end.
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// A request waiting for the running transfer to stop; the token tells the caller that
    /// set it whether it is still its own.
    struct PendingReplacement {
        let token: UUID
        let request: DownloadRequest
    }

    final class DetailsBox {
        var value: RecordDetails
        init(_ value: RecordDetails) { self.value = value }
    }
}
