/// Bytes done, bytes expected, speed and time left, for one download, a group, or everything.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes safely written so far (for a resumed download, including those from before).
    public var completedBytes: Int64
    /// Total bytes expected, when every member's length is known.
    public var expectedBytes: Int64?
    /// Smoothed transfer rate in bytes per second.
    public var bytesPerSecond: Double
    
    /// A progress value.
    public init(completedBytes: Int64 = 0, expectedBytes: Int64? = nil, bytesPerSecond: Double = 0) {
        self.completedBytes = completedBytes
        self.expectedBytes = expectedBytes
        self.bytesPerSecond = bytesPerSecond
    }

    /// Between 0 and 1, when the expected length is known.
    public var fractionCompleted: Double? {
        guard let expected = expectedBytes else { return nil }
        guard expected > 0 else { return 1 }
        return min(1, Double(completedBytes) / Double(expected))
    }

    /// Estimated time left at the current speed, when both are known.
    public var estimatedTimeRemaining: Duration? {
        guard let expected = expectedBytes, bytesPerSecond > 1 else { return nil }
        let remaining = max(0, expected - completedBytes)
        return .milliseconds(Int64(Double(remaining) / bytesPerSecond * 1000))
    }
}
