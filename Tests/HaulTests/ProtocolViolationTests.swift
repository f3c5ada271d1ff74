import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import NIOHTTP1
import Testing

/// A response that breaks HTTP is the server misbehaving (not retried); a connection that
/// breaks is the network (retried).
@Suite(.timeLimit(.minutes(3))) struct ProtocolViolationTests {
    static let url = URL(string: "http://127.0.0.1:9/f")!

    /// Malformed status lines and headers, bad Content-Length and bad chunk encoding map to
    /// `.invalidResponse`, which is not transient.
    @Test(arguments: [
        HTTPParserError.invalidCharactersUsed, .invalidHeaderToken, .invalidVersion, .invalidStatus, .invalidConstant,
        .lfExpected, .headerOverflow, .invalidContentLength, .unexpectedContentLength, .invalidChunkSize,
    ])
    func brokenHTTPIsNotRetried(error: HTTPParserError) {
        let mapped = HTTPTransport.map(error, url: Self.url)
        #expect(mapped.code == .invalidResponse)
        #expect(!mapped.isTransient)
        #expect(RetryPolicy().delay(after: mapped, nextAttempt: 2, jitter: 0) == nil)
        #expect(mapped.message.contains("not valid HTTP"))
    }

    /// A connection that ends mid-message stays a transient network failure.
    @Test(arguments: [HTTPParserError.invalidEOFState, .closedConnection])
    func brokenConnectionIsRetried(error: HTTPParserError) {
        let mapped = HTTPTransport.map(error, url: Self.url)
        #expect(mapped.code == .connectionFailed)
        #expect(mapped.isTransient)
    }

    /// A response header with an ESC character fails the download with `.invalidResponse`
    /// after exactly one request, although retries are allowed.
    @Test func controlCharacterInHeaderFailsAtOnce() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = temporary.url
            let manager = DownloadManager(configuration: Support.fastConfiguration(retries: 5))
            let id = try await manager.enqueue(Support.request(
                server, "/file/esc.bin", ["disposition": "attachment; filename=\"a\u{1B}[31mb.bin\""], in: directory))
            let info = try await manager.finished(id)
            await manager.shutdown()
            #expect(info.state == .failed)
            #expect(info.error?.code == .invalidResponse, "\(String(describing: info.error))")
            #expect(server.requests(forKey: "/file/esc.bin").count == 1)
            #expect(Support.listing(directory).isEmpty)
        }
    }
}
