import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// A `BackgroundSession` with no daemon running starts one, as iOS starts its transfer daemon
/// on demand.
@Suite("BackgroundSession starts a daemon", .timeLimit(.minutes(5)))
struct BackgroundSessionStartsDaemonTests {
    /// Attaching where no daemon listens starts `haul daemon` on that socket; a download added
    /// through the session completes in it and the file verifies.
    @Test func startsDaemonOnDemand() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let root = temporary.url
            let out = try temporary.subdirectory("out")
            let socket = root.appendingPathComponent("d.sock").path
            let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
            #expect(!FileManager.default.fileExists(atPath: socket))

            let session = try await BackgroundSession(identifier: "on-demand", configuration: .init(
                endpoint: .unixSocket(path: socket), daemonExecutable: haul,
                daemonStateDirectory: root.appendingPathComponent("state"), eventPollWait: .seconds(2)))
            let id = try await session.add(DownloadRequest(
                url: URL(string: server.url("/file/od.bin", ["size": "40000", "seed": "21"]))!, directory: out)).id
            for try await event in session.events() {
                if case .finished(let result) = event.kind, result.id == id, result.file != nil { break }
            }
            let info = try await session.info(id)
            #expect(info.state == .completed)
            #expect(FileManager.default.contents(atPath: try #require(info.fileURL).path).map(Array.init) == TestContent.bytes(seed: 21, size: 40_000))
            await session.close()

            // Stop the daemon this test started, and wait until its socket is gone.
            try await withRPCClient(endpoint: .unixSocket(path: socket)) { client in
                let _: String = try await client.call("aria2.shutdown")
            }
            try await waitUntil("the daemon to stop and remove its socket") { !FileManager.default.fileExists(atPath: socket) }
        }
    }
}
