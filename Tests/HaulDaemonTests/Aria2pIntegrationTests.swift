import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An existing aria2 client, unchanged: the Python library aria2p (from PyPI) drives a real
/// `haul daemon` over TCP with a secret: adds downloads, lists them, pauses, resumes and
/// removes them, reads their status, and gets notifications over WebSocket.
@Suite("aria2p against haul daemon", .timeLimit(.minutes(5)))
struct Aria2pIntegrationTests {
    /// Every step of Tests/Integration/aria2p_check.py passes (it exits 0).
    @Test func aria2pDrivesTheDaemon() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let root = temporary.url
            let out = try temporary.subdirectory("out")
            let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
            let secret = "aria2p-\(UUID().uuidString)"
            let daemon = try LineProcess(executable: haul, arguments: [
                "daemon", "--socket", root.appendingPathComponent("d.sock").path,
                "--state-dir", root.appendingPathComponent("state").path,
                "--rpc-listen-port", "0", "--rpc-secret", secret, "--dir", out.path,
            ])
            let ready = try await firstElement(of: daemon.errors, "the daemon's ready line", within: .seconds(120)) { $0.hasPrefix("haul daemon: ready") }
            let tcp = try #require(ready.split(separator: " ").first { $0.hasPrefix("tcp=") }?.dropFirst(4))

            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Integration/aria2p_check.py").path
            let check = try LineProcess(executable: "/usr/bin/env", arguments: [
                "python3", script, "--rpc", "http://\(tcp)/jsonrpc", "--secret", secret,
                "--base", String(server.url("/").dropLast()),
            ])
            var transcript: [String] = []
            for await line in check.output { transcript.append(line) }
            for await line in check.errors { transcript.append(line) }
            let status = await check.waitForExit()
            #expect(ChildProcess.exitCode(status) == 0, "aria2p_check.py failed:\n\(transcript.joined(separator: "\n"))")

            daemon.send(SIGTERM)
            #expect(ChildProcess.exitCode(await daemon.waitForExit()) == 0)
        }
    }
}
