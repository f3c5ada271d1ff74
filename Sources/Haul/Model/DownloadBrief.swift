/// What totals over many downloads need of each: its state, group and progress
/// (`DownloadManager.briefs()`), without the rest of its `DownloadInfo`.
public struct DownloadBrief: Sendable, Hashable {
    public var id: DownloadID
    public var state: DownloadState
    public var group: String?
    public var progress: TransferProgress

    public init(id: DownloadID, state: DownloadState, group: String?, progress: TransferProgress) {
        self.id = id
        self.state = state
        self.group = group
        self.progress = progress
    }
}
