/// Bounds on what one request body may ask for, so that one client cannot make the daemon
/// spend unbounded memory, stack or time on a single message.
package struct JSONRPCLimits: Sendable, Hashable {
    /// Largest body accepted, in bytes. Default 2 MiB (aria2's `rpc-max-request-size`).
    package var maxRequestBytes: Int
    /// Most calls in one batch, and in one `system.multicall`. Default 1,000.
    package var maxBatchLength: Int
    /// Deepest nesting of arrays and objects. Default 32: aria2's deepest parameter (a
    /// multicall of calls with options holding header arrays) needs 6.
    package var maxNestingDepth: Int

    package init(maxRequestBytes: Int = 2 << 20, maxBatchLength: Int = 1_000, maxNestingDepth: Int = 32) {
        self.maxRequestBytes = maxRequestBytes
        self.maxBatchLength = maxBatchLength
        self.maxNestingDepth = maxNestingDepth
    }
}
