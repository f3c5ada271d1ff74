import HaulDaemon
import Testing

/// The daemon test target's smallest check: the origin a server hands to the RPC layer keeps
/// its transport, which decides whether a secret is required.
@Suite struct RPCOriginTests {
    /// A TCP origin and a unix-socket origin are told apart.
    @Test func transportsDiffer() {
        #expect(RPCOrigin(transport: .tcp) != RPCOrigin(transport: .unixSocket))
    }
}
