import HaulDaemon
import Testing
@testable import HaulCLI

/// `haul daemon --rpc-allow-origin-all` and `--rpc-allow-origin ORIGIN` (repeatable) reach the
/// daemon's configuration; an origin that is not `http(s)://…` is refused at parsing.
@Suite struct DaemonOriginOptionsTests {
    @Test func originsReachTheConfiguration() throws {
        let listed = try #require(try HaulCommand.parseAsRoot([
            "daemon", "--rpc-allow-origin", "http://localhost:8080", "--rpc-allow-origin", "https://ui.example",
        ]) as? DaemonCommand)
        #expect(listed.daemonConfiguration.allowedOrigins == RPCOriginPolicy(origins: ["http://localhost:8080", "https://ui.example"]))
        let all = try #require(try HaulCommand.parseAsRoot(["daemon", "--rpc-allow-origin-all"]) as? DaemonCommand)
        #expect(all.daemonConfiguration.allowedOrigins.allowsAll)
        let none = try #require(try HaulCommand.parseAsRoot(["daemon"]) as? DaemonCommand)
        #expect(none.daemonConfiguration.allowedOrigins == RPCOriginPolicy())
    }

    @Test func originsMustBeHTTPOrigins() {
        #expect(throws: (any Error).self) { try HaulCommand.parseAsRoot(["daemon", "--rpc-allow-origin", "localhost:8080"]) }
    }
}
