import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 25, item 5: responses that are odd but not transient failures, and what a failed
/// download leaves in its directory.
@Suite(.timeLimit(.minutes(2))) struct ResponseEdgeTests {
    /// A response with both Transfer-Encoding: chunked and Content-Length, in either order, is a protocol error (RFC 9112 §6.3): the download fails with `.invalidResponse` (exit 7) after one request, although retries are allowed, and leaves nothing behind.
    @Test(arguments: [
        "Content-Length: 10\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 10\r\n",
    ])
    func chunkedWithLengthIsAProtocolError(headers: String) async throws {
        let response = "HTTP/1.1 200 OK\r\n\(headers)Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        let server = try CannedHTTPServer(response: response)
        defer { server.stop() }
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let request = DownloadRequest(url: URL(string: "http://127.0.0.1:\(server.port)/both.bin")!, directory: directory)
        let info = try await Support.downloadOne(request, configuration: Support.fastConfiguration(retries: 5))
        #expect(info.state == .failed)
        #expect(info.error?.code == .invalidResponse, "\(String(describing: info.error))")
        #expect(server.connections == 1, "retried \(server.connections - 1) times")
        #expect(Support.listing(directory).isEmpty)
    }

    /// A server that answers each range with fewer bytes than asked, all that its Content-Range announces, is followed range by range without a failure: with one retry allowed, the download (dropped once, then resumed in ranges of 20,000 bytes) completes exact in two attempts.
    @Test func honestShortRangesUseNoRetry() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            let size = 100_000
            let query = ["size": "\(size)", "seed": "270", "drop": "30000", "dropTimes": "1", "maxRange": "20000"]
            let info = try await Support.downloadOne(
                Support.request(server, "/file/short.bin", query, in: directory), configuration: Support.fastConfiguration(retries: 1))
            #expect(info.state == .completed, "\(String(describing: info.error))")
            #expect(info.attempts == 2)
            #expect(Support.contents(directory.appendingPathComponent("short.bin")) == TestContent.bytes(seed: 270, size: size))
            let ranges = server.requests(forKey: "/file/short.bin").compactMap { $0.header("range") }
            #expect(ranges == ["bytes=30000-", "bytes=50000-", "bytes=70000-", "bytes=90000-"])
        }
    }

    /// The rule for part files after a failure: a part whose bytes can be resumed (a strong validator) is kept, so that the same request continues from it; one whose bytes cannot be (no validator) is deleted.
    @Test func failedDownloadKeepsOnlyResumableBytes() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            let noRetry = Support.fastConfiguration(retries: 0)
            let resumable = Support.request(server, "/file/keep.bin", ["size": "100000", "drop": "40000"], in: directory)
            let kept = try await Support.downloadOne(resumable, configuration: noRetry)
            #expect(kept.state == .failed)
            #expect(Support.leftovers(directory).count == 1, "the resumable part is kept")

            let unresumable = Support.request(
                server, "/file/gone.bin", ["size": "100000", "drop": "40000", "etag": "none", "lm": "0"], in: directory)
            let gone = try await Support.downloadOne(unresumable, configuration: noRetry)
            #expect(gone.state == .failed)
            #expect(Support.leftovers(directory).count == 1, "the unresumable part is deleted")
        }
    }
}

/// A loopback HTTP server that answers every connection with the same bytes and closes it,
/// for responses no well-behaved server library would send. Counts the connections.
final class CannedHTTPServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var accepted = 0
    private var stopped = false

    var connections: Int { lock.withLock { accepted } }

    init(response: String) throws {
        (listener, port) = try LoopbackPort.listening()
        let bytes = Array(response.utf8)
        Thread.detachNewThread { [self] in serve(bytes) }
    }

    private func serve(_ bytes: [UInt8]) {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let done = lock.withLock {
                accepted += 1
                return stopped
            }
            if done {
                close(connection)
                return
            }
            // Read the request head (whatever arrives first), answer, close.
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            close(connection)
        }
    }

    func stop() {
        lock.withLock { stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
