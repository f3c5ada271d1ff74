import Foundation

extension StoredDownload {
    /// The public view of the row as its writer last stored it: a download another daemon of
    /// the fleet runs. Progress is the durable offset (what was checkpointed, not what is in
    /// flight); speed is known only where it runs.
    var storedInfo: DownloadInfo {
        var info = DownloadInfo(id: id, request: request, group: group)
        info.state = state
        let done = state == .completed ? (expectedLength ?? fileSize ?? durableOffset) : durableOffset
        info.progress = TransferProgress(completedBytes: done, expectedBytes: expectedLength)
        info.finalURL = finalURL
        info.fileURL = filePath.map { URL(fileURLWithPath: $0, isDirectory: false) }
        info.skipped = skipped
        info.verifiedChecksums = verifiedChecksums
        info.error = error.map(DownloadManager.haulError)
        info.attempts = attempts
        return info
    }
}
