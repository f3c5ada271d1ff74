/// Where running downloads fetch from (aria2's `getServers`).
extension DownloadManager {
    /// The URIs download `id` fetches from right now, with their speeds where known: one for
    /// a download on one connection, each mirror in use for a split one. Empty when it is not
    /// running (or between attempts).
    public func servers(of id: DownloadID) -> [DownloadServer] {
        records[id]?.details.live?.servers ?? []
    }
}
