import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `haul get` on a bad day: with `--max-tries 0` or `--retry-until` a server that went away is
/// waited for, visibly, and the download continues from its bytes when the server is back; a
/// deadline ends the wait with a clear error; a permanent error is never waited for.
@Suite(.timeLimit(.minutes(2))) struct GetWaitingTests {
    /// A server that vanishes mid-download (its process killed) and refuses connections for
    /// longer than the quick retries, then comes back on the same port: the download waits
    /// (`retrying` lines with `waiting`, saying why), then continues from its bytes and
    /// finishes with the right content, and no byte is fetched twice.
    @Test func waitsForAServerThatComesBack() async throws {
        let size = 400_000
        // Held bound (connections refused) so that no other server of the run takes it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let port = reserved.port
        let tool = try #require(LineProcess.builtProduct("haul-test-server"), "haul-test-server is not built")
        // Below the ephemeral range, so nothing else takes it once this server is gone.
        reserved.release()
        let first = try LineProcess(executable: tool, arguments: ["--port", "\(port)"], timeout: .seconds(100))
        _ = try await firstElement(of: first.output, "the test server to listen", within: .seconds(120)) { $0.contains("listening on") }
        try await withTemporaryDirectory { directory in
            // The first server sends slowly from the start (20 s for the body), so that it dies
            // mid-body even when this process reads the progress lines seconds late on a loaded
            // machine; resumed ranges (starting past 0) come at full speed.
            let path = "/file/back.bin?size=\(size)&seed=5&rate=20000&rateStart=0"
            let run = try HaulProcess([
                "get", "--json", "--max-tries", "0", "--retries", "1", "--retry-wait", "0.1", "http://127.0.0.1:\(port)\(path)",
            ], in: directory.url)
            #expect(await run.stdout.progress(reaching: 50_000) != nil)
            first.send(SIGKILL)
            _ = await first.waitForExit()

            // Refused for longer than the one quick retry: attempt 2 is the quick one, 3 and 4 wait.
            let waited = await run.stdout.firstLine { line in
                guard let event = try? JSONEventLine.decode(line), event.event == "retrying" else { return false }
                return event.waiting == true && (event.attempt ?? 0) >= 4
            }
            #expect(waited != nil)
            let retries = try JSONEventLine.decodeAll(await run.stdout.lines).filter { $0.event == "retrying" }
            #expect(retries.first?.waiting == false)
            for event in retries.dropFirst() {
                #expect(event.waiting == true)
                #expect(event.error?.code == "connectionFailed")
                #expect(event.error?.message == "127.0.0.1:\(port): connection refused (nothing listens there, or the server is down)")
            }

            let second = try await TestServer.start(port: port)
            let result = await run.result()
            try await second.shutdown()

            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(directory.contents(of: "back.bin") == Checksums.content(seed: 5, size: size))
            // The second server was asked only for the bytes the first one had not delivered.
            let resumed = try #require(second.requests(forKey: "/file/back.bin").first)
            let range = try #require(resumed.header("range"))
            let offset = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(range == "bytes=\(offset)-")
            #expect(offset >= 50_000 && offset < size)
            #expect(second.requests(forKey: "/file/back.bin").count == 1)
            #expect(second.bytesSent(forKey: "/file/back.bin") == size - offset)
            // What the client received in all: every byte once.
            let summary = try #require(try JSONEventLine.decodeAll(result.stdoutLines).last)
            #expect(summary.event == "summary")
            #expect(summary.receivedBytes == Int64(size))
        }
    }

    /// `-j 1 --max-tries 0`, a URL whose server is down first and a live one second: the
    /// first waits without its slot, so the live file lands while it waits; then its server
    /// comes up on its port and it lands too, and the run exits 0.
    @Test func liveFileLandsWhileADeadOneWaits() async throws {
        // Held bound (connections refused) so that no other server of the run takes it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let port = reserved.port
        try await withTestServer { live in
            try await withTemporaryDirectory { directory in
                let run = try HaulProcess([
                    "get", "--json", "-j", "1", "--max-tries", "0", "--retries", "0", "--retry-wait", "0.1",
                    "http://127.0.0.1:\(port)/file/dead.bin?size=3000&seed=31", live.url("/file/live.bin", ["size": "5000", "seed": "32"]),
                ], in: directory.url, timeout: .seconds(40))
                let landed = await run.stdout.firstLine { line in
                    guard let event = try? JSONEventLine.decode(line) else { return false }
                    return event.event == "completed" && event.path?.hasSuffix("live.bin") == true
                }
                #expect(landed != nil, "the live file did not land while the dead one waited")
                #expect(directory.contents(of: "live.bin") == Checksums.content(seed: 32, size: 5000))
                let before = try JSONEventLine.decodeAll(await run.stdout.lines)
                #expect(before.contains { $0.event == "retrying" && $0.waiting == true })
                #expect(!before.contains { $0.event == "failed" })

                reserved.release()

                let server = try await TestServer.start(port: port)
                let result = await run.result()
                try await server.shutdown()
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "dead.bin") == Checksums.content(seed: 31, size: 3000))
            }
        }
    }

    /// Waiting ends at `--retry-until`: the download fails with exit 4 and an error that says it
    /// gave up waiting, and why.
    @Test func deadlineEndsTheWait() async throws {
        // A port nothing listens on.
        // Held bound (connections refused) so that no other server of the run takes it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let url = "http://127.0.0.1:\(reserved.port)/file/never.bin"
        try await withTemporaryDirectory { directory in
            let result = try await HaulProcess.run([
                "get", "--json", "--retries", "0", "--retry-wait", "0.1", "--retry-until", "4s", url,
            ], in: directory.url)
            #expect(result.status == 4, "stderr: \(result.stderr)")
            let events = try JSONEventLine.decodeAll(result.stdoutLines)
            #expect(events.contains { $0.event == "retrying" && $0.waiting == true })
            let failed = try #require(events.first { $0.event == "failed" })
            #expect(failed.error?.code == "deadlineExceeded")
            #expect(failed.error?.message.contains("gave up waiting") == true)
            #expect(failed.error?.message.contains("connection refused") == true)
        }
    }

    /// A 404 is permanent: even with `--max-tries 0` it fails at once, after one request.
    @Test func permanentErrorsDoNotWait() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run(["get", "--max-tries", "0", server.url("/file/gone.bin", ["status": "404"])], in: directory.url)
                #expect(result.status == 5, "stderr: \(result.stderr)")
                #expect(server.requests(forKey: "/file/gone.bin").count == 1)
            }
        }
    }

    /// `--max-tries N` and `--retries` together, a bad duration, or a bad wait are usage errors.
    @Test(arguments: [
        ["--max-tries", "3", "--retries", "2"],
        ["--max-tries", "-1"],
        ["--max-tries", "2", "--retry-until", "1h"],
        ["--retry-until", "soon"],
        ["--retry-until", "0s"],
        ["--retry-wait", "0"],
    ])
    func badRetryOptionsAreUsageErrors(options: [String]) async throws {
        try await withTemporaryDirectory { directory in
            let result = try await HaulProcess.run(["get"] + options + ["http://127.0.0.1:9/a"], in: directory.url)
            #expect(result.status == 2, "stderr: \(result.stderr)")
        }
    }
}
