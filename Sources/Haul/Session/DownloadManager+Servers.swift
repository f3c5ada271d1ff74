/// Where running downloads fetch from (aria2's `getServers`).
extension DownloadManager {
    /// The URIs download `id` fetches from in its current attempt, with their speeds where
    /// known: one for a download on one connection, each mirror asked for a split one (see
    /// `DownloadServer.connections` for the ones in use right now). Empty when it is not
    /// running (or between attempts).
    package func servers(of id: DownloadID) -> [DownloadServer] {
        records[id]?.details.live?.servers ?? []
    }
}
