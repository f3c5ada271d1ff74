extension Duration {
    /// The duration in seconds, fractions included.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole nanoseconds (what NIO's `TimeAmount` takes), sub-second parts kept.
    var inNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
