import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul daemon` on a bad day: a download whose server vanishes waits for it (shown as aria2's
/// `waiting`, with the reason) instead of failing, and continues from its bytes when it is back.
@Suite(.timeLimit(.minutes(2))) struct DaemonWaitingTests {
    /// The server process is killed mid-download and its port refuses connections for longer
    /// than the quick retries; `tellStatus` says `waiting` with the reason; a server on the same
    /// port finishes the download, asked only for the bytes the first one had not delivered.
    @Test func daemonDownloadWaitsForItsServer() async throws {
        let size = 400_000
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Held bound (connections refused) so that no other server of the run takes it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let port = reserved.port
        let tool = try #require(LineProcess.builtProduct("haul-test-server"), "haul-test-server is not built")
        // Below the ephemeral range, so nothing else takes it once this server is gone.
        reserved.release()
        let first = try LineProcess(executable: tool, arguments: ["--port", "\(port)"], timeout: .seconds(100))
        _ = try await firstElement(of: first.output, "the test server to listen", within: .seconds(120)) { $0.contains("listening on") }
        let socket = directory.path("haul.sock")
        try FileManager.default.createDirectory(atPath: directory.path("files"), withIntermediateDirectories: true)
        let daemon = try DaemonTestProcess([
            "--socket", socket, "--state-dir", directory.path("state"), "--no-tcp", "--dir", directory.path("files"),
            "--retries", "1", "--retry-wait", "0.1",
        ])
        defer { daemon.send(SIGKILL) }
        #expect(try await !daemon.waitForReady().fields.isEmpty)

        try await withRPCClient(endpoint: .unixSocket(path: socket)) { client in
            // The first server sends slowly from the start (20 s for the body), so that it dies
            // mid-body even when a loaded machine answers the polls seconds late; resumed
            // ranges come at full speed.
            let url = "http://127.0.0.1:\(port)/file/w.bin?size=\(size)&seed=6&rate=20000&rateStart=0"
            let gid: String = try await client.call("aria2.addUri", [url], ["out": "w.bin"])
            func status() async throws -> [String: String] {
                try await client.call("aria2.tellStatus", gid, ["status", "completedLength", "errorMessage"])
            }
            try await waitUntil("50,000 bytes", within: .seconds(60)) { Int(try await status()["completedLength"] ?? "") ?? 0 >= 50_000 }
            first.send(SIGKILL)
            _ = await first.waitForExit()

            try await waitUntil("a waiting download refused by its server", within: .seconds(60)) {
                let now = try await status()
                return now["status"] == "waiting" && now["errorMessage"]?.contains("connection refused") == true
            }
            let second = try await TestServer.start(port: port)
            try await waitUntil("the download to complete", within: .seconds(60)) { try await status()["status"] == "complete" }
            try await second.shutdown()

            let content = FileManager.default.contents(atPath: directory.path("files/w.bin")).map { [UInt8]($0) }
            #expect(content == TestContent.bytes(seed: 6, size: size))
            let requests = second.requests(forKey: "/file/w.bin")
            #expect(requests.count == 1)
            let range = try #require(requests.first?.header("range"))
            let offset = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(offset >= 50_000 && offset < size)
            #expect(second.bytesSent(forKey: "/file/w.bin") == size - offset)
        }
    }
}
