import ArgumentParser
import Haul
import HaulDaemon

/// aria2's transfer options, shared by `haul get` and `haul daemon` so that both take them
/// with the same names, defaults and checks: connections per download, segment size, speed
/// limits and timeouts.
struct TransferOptions: ParsableArguments {
    @Option(name: [.customShort("s"), .customLong("split")], help: ArgumentHelp(
        "Connections to split each download over when the server allows it (default 5; at most -x).", valueName: "n"))
    var split: Int?

    @Option(name: [.customShort("x"), .customLong("max-connection-per-server")], help: ArgumentHelp(
        "Most connections per download, 1 to \(DaemonTransferOptions.connectionCeiling) (default 1: no splitting).",
        valueName: "n"))
    var maxConnectionsPerServer: Int?

    @Option(name: .customLong("min-split-size"), help: ArgumentHelp(
        "Smallest segment a download is split into, e.g. 20M (default 20M).", valueName: "size"))
    var minSplitSize: String?

    @Option(name: .customLong("max-download-limit"), help: ArgumentHelp(
        "Speed limit of each download in bytes per second, e.g. 512K or 2M (default 0: none).", valueName: "rate"))
    var maxDownloadLimit: String?

    @Option(name: .customLong("max-overall-download-limit"), help: ArgumentHelp(
        "Speed limit of all downloads together, e.g. 4M (default 0: none).", valueName: "rate"))
    var maxOverallDownloadLimit: String?

    @Option(name: .customLong("timeout"), help: ArgumentHelp(
        "Seconds without receiving a byte before a transfer is stopped and retried; waits for a speed limit do not count (default 30).",
        valueName: "seconds"))
    var timeout: Double?

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp(
        "Seconds allowed to connect to a server (default 15).", valueName: "seconds"))
    var connectTimeout: Double?

    func validate() throws {
        for (name, value) in [("--timeout", timeout), ("--connect-timeout", connectTimeout)] {
            if let value, !(value > 0 && value <= 86_400) {
                throw ValidationError("\(name) must be a number of seconds above 0 (at most 86400), got \(value)")
            }
        }
        try Self.check(split: split, maxConnectionsPerServer: maxConnectionsPerServer, maxDownloadLimit: maxDownloadLimit)
        if let minSplitSize, (DownloadPlan.byteCount(minSplitSize) ?? 0) < 1 {
            throw ValidationError("--min-split-size must be a size such as 1M or 20M, got '\(minSplitSize)'")
        }
        try Self.checkRate("--max-overall-download-limit", maxOverallDownloadLimit)
    }

    /// The checks of the per-download options, which `haul add` takes too.
    static func check(split: Int?, maxConnectionsPerServer: Int?, maxDownloadLimit: String?) throws {
        if let split, !DaemonTransferOptions.splitRange.contains(split) {
            throw ValidationError("--split must be between 1 and \(DaemonTransferOptions.splitRange.upperBound)")
        }
        if let maxConnectionsPerServer, !(1...DaemonTransferOptions.connectionCeiling).contains(maxConnectionsPerServer) {
            throw ValidationError("--max-connection-per-server must be between 1 and \(DaemonTransferOptions.connectionCeiling)")
        }
        try checkRate("--max-download-limit", maxDownloadLimit)
    }

    private static func checkRate(_ name: String, _ value: String?) throws {
        if let value, DownloadPlan.byteCount(value) == nil {
            throw ValidationError("\(name) must be a rate such as 512K or 2M (0 for none), got '\(value)'")
        }
    }

    /// `--max-download-limit` in bytes per second; nil when absent or 0 (no limit).
    var perDownloadLimit: Int64? { Self.rate(maxDownloadLimit) }

    /// `haul get`: the options as one manager's configuration.
    func apply(to configuration: inout DownloadManager.Configuration) {
        if let split { configuration.split = split }
        if let maxConnectionsPerServer { configuration.maxConnectionsPerServer = maxConnectionsPerServer }
        if let size = minSplitSize.flatMap(DownloadPlan.byteCount) { configuration.minSegmentSize = size }
        configuration.maxBytesPerSecond = Self.rate(maxOverallDownloadLimit)
        if let readTimeout { configuration.readTimeout = readTimeout }
        if let connectTimeoutDuration { configuration.connectTimeout = connectTimeoutDuration }
    }

    /// `haul daemon`: the options for all its sessions.
    var daemonTransfers: DaemonTransferOptions {
        var transfers = DaemonTransferOptions()
        if let split { transfers.split = split }
        if let maxConnectionsPerServer { transfers.maxConnectionPerServer = maxConnectionsPerServer }
        if let size = minSplitSize.flatMap(DownloadPlan.byteCount) { transfers.minSplitSize = size }
        transfers.maxDownloadLimit = perDownloadLimit ?? 0
        transfers.maxOverallDownloadLimit = Self.rate(maxOverallDownloadLimit) ?? 0
        transfers.readTimeout = readTimeout
        transfers.connectTimeout = connectTimeoutDuration
        return transfers
    }

    private var readTimeout: Duration? { timeout.map(Self.duration) }
    private var connectTimeoutDuration: Duration? { connectTimeout.map(Self.duration) }

    /// Seconds as a duration, rounded up to the millisecond so that no value above 0 becomes 0.
    private static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// A rate option's value in bytes per second; nil when absent or 0 (no limit).
    private static func rate(_ text: String?) -> Int64? {
        text.flatMap(DownloadPlan.byteCount).flatMap { $0 > 0 ? $0 : nil }
    }
}
