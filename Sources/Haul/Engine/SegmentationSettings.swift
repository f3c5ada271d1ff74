/// How a runner splits downloads over several connections (see `DownloadManager.Configuration`).
struct SegmentationSettings: Sendable, Hashable {
    /// Connections a download is split over when its request does not say (aria2's `--split`).
    var split: Int
    /// Upper bound of the connections of one download (aria2's `--max-connection-per-server`).
    var maxConnectionsPerServer: Int
    /// No segment is planned smaller than this (aria2's `--min-split-size`).
    var minSegmentSize: Int64
    /// A connection silent this long gives the rest of its segment to an idle one (nil: never).
    var stalledConnectionTimeout: Duration?

    /// One connection per download, whatever the server offers.
    static let singleConnection = SegmentationSettings(
        split: 1, maxConnectionsPerServer: 1, minSegmentSize: 20 << 20, stalledConnectionTimeout: nil)

    /// Connections for this request: its own `split`, else the default, capped per server
    /// (a request with mirrors has a server per URI, as aria2 counts them).
    func connections(for request: DownloadRequest) -> Int {
        // Counted without building the list when there are no mirrors (asked on every attempt).
        max(1, min(request.split ?? split, maxConnectionsPerServer * (request.mirrors.isEmpty ? 1 : request.urls.count)))
    }

    /// The least a tail steal takes: a steal costs a request, so it must be worth one, but the
    /// last stretch of a large download must still be shared (1 MiB, or less for small segments).
    var minStealSize: Int64 { max(1, min(minSegmentSize, 1 << 20)) }
}
