import CoreMetrics
import Haul
import Prometheus

/// The daemon's metrics: a Prometheus registry of its own, and the swift-metrics factory its
/// sessions' managers make their instruments with (`DownloadManager.Configuration.metricsFactory`).
///
/// Not the process's `MetricsSystem`: that can be bootstrapped once per process, and tests run
/// several daemons in one process, each of which must report only its own downloads.
package struct DaemonMetrics: Sendable {
    /// What `GET /metrics` renders.
    package let registry: PrometheusCollectorRegistry
    /// Makes instruments in `registry`, the library's with their help text.
    package let factory: any MetricsFactory

    /// The buckets of the store write histogram, in seconds: a batch of a few rows takes well
    /// under a millisecond on a local disk, a large one or a slow disk tens to hundreds; the
    /// library's default (5 ms up) would put almost every write in its first bucket.
    package static let storeWriteBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(5),
    ]

    package init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[ManagerMetrics.Name.storeWrite] = Self.storeWriteBuckets
        self.registry = registry
        self.factory = DescribedPrometheusFactory(base: factory, help: ManagerMetrics.Name.help)
    }

    /// The text exposition format (version 0.0.4) of every instrument made so far.
    package func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
