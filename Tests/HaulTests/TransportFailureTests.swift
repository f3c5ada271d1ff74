import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
@testable import Haul

/// Network failures read as sentences about the server, not as nested library descriptions,
/// and keep the kind that decides retries.
@Suite("Transport failure messages")
struct TransportFailureTests {
    let url = URL(string: "https://files.example:8443/a.bin")!

    /// errno values from a socket become plain words, with `host:port`; no `errno` numbers.
    @Test func socketErrors() {
        let refused = TransportFailure.map(IOError(errnoCode: ECONNREFUSED, reason: "connect"), url: url)
        #expect(refused.code == .connectionFailed)
        #expect(refused.message == "files.example:8443: connection refused (nothing listens there, or the server is down)")
        #expect(refused.isTransient)
        let reset = TransportFailure.map(IOError(errnoCode: ECONNRESET, reason: "read"), url: url)
        #expect(reset.message == "files.example:8443: connection reset by the server")
        #expect(!reset.message.contains("errno"))
    }

    /// The client's own errors: timeouts are `.timeout`, a closed connection is a broken one.
    @Test func clientErrors() {
        let timeout = TransportFailure.map(HTTPClientError.connectTimeout, url: url)
        #expect(timeout.code == .timeout)
        #expect(timeout.message == "files.example:8443: no connection within the connect timeout")
        let closed = TransportFailure.map(HTTPClientError.remoteConnectionClosed, url: url)
        #expect(closed.code == .connectionFailed)
        #expect(closed.message == "files.example:8443: the server closed the connection")
        let proxy = TransportFailure.map(HTTPClientError.proxyAuthenticationRequired, url: url)
        #expect(proxy.httpStatus == 407)
        #expect(!proxy.isTransient)
    }

    /// The default port is the scheme's; IPv6 addresses are bracketed.
    @Test func places() {
        #expect(TransportFailure.place(URL(string: "http://h/x")!) == "h:80")
        #expect(TransportFailure.place(URL(string: "https://h/x")!) == "h:443")
        #expect(TransportFailure.place(URL(string: "http://[::1]:81/x")!) == "[::1]:81")
    }
}
