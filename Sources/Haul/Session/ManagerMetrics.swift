import CoreMetrics

/// The instruments a manager reports to, made with swift-metrics from the factory of its
/// configuration (`Configuration.metricsFactory`, else the process's `MetricsSystem.factory`,
/// which does nothing unless the app bootstrapped a backend). `haul daemon` passes a
/// Prometheus factory of its own and serves it at `/metrics`; docs/metrics.md lists them.
///
/// Several managers may report to one factory (a daemon's sessions): every instrument only
/// adds or subtracts, never sets a value, so their figures sum. Nothing here is touched per
/// received buffer: bytes are counted when the progress ticker samples a transfer and when
/// the transfer ends, states where a record's state changes, store writes once per batch.
package struct ManagerMetrics: Sendable {
    /// The instruments' names, as Prometheus shows them.
    package enum Name {
        package static let downloads = "haul_downloads"
        package static let finished = "haul_downloads_finished_total"
        package static let failures = "haul_download_failures_total"
        package static let bytesReceived = "haul_bytes_received_total"
        package static let retries = "haul_retries_total"
        package static let serverWaits = "haul_server_waits_total"
        package static let storeWrite = "haul_store_write_duration_seconds"
        package static let takeovers = "haul_lease_takeovers_total"
        package static let leasesLost = "haul_leases_lost_total"

        /// One sentence per instrument, for a backend that shows it (Prometheus's `# HELP`).
        package static let help: [String: String] = [
            downloads: "Downloads held, by state (finished ones until history forgets them).",
            finished: "Downloads that reached the end, by outcome.",
            failures: "Downloads failed for good, by error code.",
            bytesReceived: "Body bytes received from servers, every attempt included.",
            retries: "Quick retries scheduled after a transient failure.",
            serverWaits: "Waits for a server once the quick retries were used up.",
            storeWrite: "Time of each write to the store: new downloads, or a batch of changes.",
            takeovers: "Downloads this daemon claimed after another daemon's lease on them expired.",
            leasesLost: "Leases this daemon lost while it ran their downloads (their transfers stopped).",
        ]
    }

    /// What a store write timed by `storeWrite` wrote.
    enum StoreWrite: String, CaseIterable {
        /// New downloads, written before they may start.
        case new
        /// The batch of state changes, checkpoints, placement intents and events.
        case batch
    }

    let factory: any MetricsFactory
    /// Downloads the manager holds, one meter per state (`RecordTable` moves them).
    let states: DownloadStateMeters
    let bytesReceived: Counter
    let retries: Counter
    let serverWaits: Counter
    /// Downloads claimed from a daemon that stopped renewing its lease. Fleet members only
    /// (nil otherwise): a counter that could never move would only mislead.
    let takeovers: Counter?
    /// Leases lost while their downloads ran here (refused by the store, or not renewed in
    /// time). Fleet members only.
    let leasesLost: Counter?
    private let finished: [DownloadState: Counter]
    private let storeWrites: [StoreWrite: CoreMetrics.Timer]

    init(factory: any MetricsFactory, fleet: Bool = false) {
        self.factory = factory
        states = DownloadStateMeters(factory: factory)
        bytesReceived = Counter(label: Name.bytesReceived, factory: factory)
        retries = Counter(label: Name.retries, factory: factory)
        serverWaits = Counter(label: Name.serverWaits, factory: factory)
        takeovers = fleet ? Counter(label: Name.takeovers, factory: factory) : nil
        leasesLost = fleet ? Counter(label: Name.leasesLost, factory: factory) : nil
        var finished: [DownloadState: Counter] = [:]
        for state in DownloadState.allCases where state.isTerminal {
            finished[state] = Counter(label: Name.finished, dimensions: [("outcome", state.rawValue)], factory: factory)
        }
        self.finished = finished
        var storeWrites: [StoreWrite: CoreMetrics.Timer] = [:]
        for write in StoreWrite.allCases {
            storeWrites[write] = CoreMetrics.Timer(label: Name.storeWrite, dimensions: [("write", write.rawValue)], factory: factory)
        }
        self.storeWrites = storeWrites
    }

    /// A download reached `state` (completed, failed or canceled) and is counted as finished.
    func finished(_ state: DownloadState) {
        finished[state]?.increment()
    }

    /// A download failed for good with `code`. Made on first use: one series per code seen.
    func failed(_ code: HaulError.Code) {
        Counter(label: Name.failures, dimensions: [("code", "\(code)")], factory: factory).increment()
    }

    /// Bytes received since they were last counted, when there are some.
    func received(_ bytes: Int64) {
        if bytes > 0 { bytesReceived.increment(by: bytes) }
    }

    /// A store write of the kind `write` that began at `start` has ended (written or failed).
    func storeWrote(_ write: StoreWrite, since start: ContinuousClock.Instant) {
        let elapsed = start.duration(to: .now).components
        storeWrites[write]?.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }
}

/// The gauge of downloads by state: a meter per `DownloadState`, moved by one when a download
/// enters or leaves a state. A manager that shuts down takes its downloads back out, so that
/// the figures are those of the managers running.
struct DownloadStateMeters: Sendable {
    private let meters: [Meter]

    init(factory: any MetricsFactory, fleet: Bool = false) {
        meters = DownloadState.allCases.map {
            Meter(label: ManagerMetrics.Name.downloads, dimensions: [("state", $0.rawValue)], factory: factory)
        }
    }

    /// A download moved from `old` (nil: it was not held) to `new` (nil: it is no longer held).
    func moved(from old: DownloadState?, to new: DownloadState?) {
        guard old != new else { return }
        if let old { meter(old).decrement() }
        if let new { meter(new).increment() }
    }

    /// Takes `count` downloads in `state` out (a manager shutting down).
    func remove(_ count: Int, in state: DownloadState) {
        if count > 0 { meter(state).decrement(by: Double(count)) }
    }

    private func meter(_ state: DownloadState) -> Meter {
        meters[Self.index(of: state)]
    }

    /// The state's place in `DownloadState.allCases`, without searching it.
    static func index(of state: DownloadState) -> Int {
        switch state {
        case .queued: 0
        case .running: 1
        case .paused: 2
        case .completed: 3
        case .failed: 4
        case .canceled: 5
        }
    }
}

extension DownloadManager {
    /// The manager is shut down: its downloads leave the gauge of downloads by state (one
    /// count of them, once), and later changes to them are not reported.
    func stopReportingStates() {
        guard let meters = records.stateMeters else { return }
        records.stateMeters = nil
        let counts = stateCounts()
        meters.remove(counts.queued, in: .queued)
        meters.remove(counts.running, in: .running)
        meters.remove(counts.paused, in: .paused)
        meters.remove(counts.completed, in: .completed)
        meters.remove(counts.failed, in: .failed)
        meters.remove(counts.canceled, in: .canceled)
    }
}
