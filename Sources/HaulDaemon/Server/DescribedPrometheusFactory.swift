import CoreMetrics
import Prometheus

/// swift-prometheus's factory, with a `# HELP` line for the instruments it has a sentence for.
///
/// `PrometheusMetricsFactory` makes every metric without help text (swift-metrics has no
/// place for one), and its registry refuses the same name with another help text later; so
/// the described instruments are made here, through the registry's own calls that take one,
/// and everything else goes to the factory as it is.
struct DescribedPrometheusFactory: MetricsFactory {
    let base: PrometheusMetricsFactory
    /// Help text by metric name.
    let help: [String: String]

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let descriptor = descriptor(label) else { return base.makeCounter(label: label, dimensions: dimensions) }
        return base.registry.makeCounter(descriptor: descriptor, labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard let descriptor = descriptor(label) else { return base.makeFloatingPointCounter(label: label, dimensions: dimensions) }
        return base.registry.makeCounter(descriptor: descriptor, labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let descriptor = descriptor(label) else { return base.makeMeter(label: label, dimensions: dimensions) }
        return base.registry.makeGauge(descriptor: descriptor, labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard let descriptor = descriptor(label) else { return base.makeTimer(label: label, dimensions: dimensions) }
        let buckets = base.durationHistogramBuckets[label] ?? base.defaultDurationHistogramBuckets
        return base.registry.makeDurationHistogram(descriptor: descriptor, labels: dimensions, buckets: buckets)
    }

    /// The whole name as the metric's name (no unit appended), with its help text.
    private func descriptor(_ label: String) -> MetricNameDescriptor? {
        help[label].map { MetricNameDescriptor(metricName: label, unitName: "", helpText: $0) }
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
