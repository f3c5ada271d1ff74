/// What totals over many downloads need of each: its state, group and progress
/// (`DownloadManager.briefs()`), without the rest of its `DownloadInfo`.
package struct DownloadBrief: Sendable, Hashable {
    package var id: DownloadID
    package var state: DownloadState
    package var group: String?
    package var progress: TransferProgress

    package init(id: DownloadID, state: DownloadState, group: String?, progress: TransferProgress) {
        self.id = id
        self.state = state
        self.group = group
        self.progress = progress
    }
}
