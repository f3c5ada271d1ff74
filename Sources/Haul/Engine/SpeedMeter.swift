/// A smoothed transfer rate: an exponential moving average of bytes per second, sampled at
/// the progress interval, so that the speed and ETA shown do not jump with every chunk.
struct SpeedMeter: Sendable {
    /// Weight of the newest sample; 0.3 settles within about two seconds at 4 samples/s.
    var smoothing: Double = 0.3
    private(set) var bytesPerSecond: Double = 0
    private var lastBytes: Int64?
    private var lastTime: ContinuousClock.Instant?

    init() {}

    /// Records the byte count at `time` and returns the new smoothed rate.
    @discardableResult
    mutating func sample(bytes: Int64, at time: ContinuousClock.Instant) -> Double {
        defer { lastBytes = bytes; lastTime = time }
        guard let previousBytes = lastBytes, let previousTime = lastTime else { return bytesPerSecond }
        let elapsed = previousTime.duration(to: time)
        let seconds = elapsed.inSeconds
        guard seconds > 0 else { return bytesPerSecond }
        // A restart from zero makes the delta negative: that is not negative speed.
        let instant = Double(max(0, bytes - previousBytes)) / seconds
        bytesPerSecond = bytesPerSecond == 0 ? instant : smoothing * instant + (1 - smoothing) * bytesPerSecond
        return bytesPerSecond
    }
}
