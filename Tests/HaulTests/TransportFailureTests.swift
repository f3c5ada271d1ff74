import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSOCKS
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

    /// Through a proxy, a refused connection is the proxy's and says so (still transient); a
    /// SOCKS proxy that could not reach the origin is transient; one that wants credentials or
    /// does not speak SOCKS5 cannot be used (not transient).
    @Test func proxyErrors() {
        let proxy = ProxySettings.Proxy(host: "127.0.0.1", port: 1080, kind: .socks5h)
        let refused = TransportFailure.map(IOError(errnoCode: ECONNREFUSED, reason: "connect"), url: url, proxy: proxy)
        #expect(refused.code == .connectionFailed)
        #expect(refused.message == "files.example:8443: cannot reach the proxy socks5h://127.0.0.1:1080: connection refused (nothing listens there, or the server is down)")
        #expect(refused.isTransient)
        let unreachable = TransportFailure.map(SOCKSError.ConnectionFailed(reply: .hostUnreachable), url: url, proxy: proxy)
        #expect(unreachable.code == .connectionFailed)
        #expect(unreachable.message == "files.example:8443: the SOCKS proxy socks5h://127.0.0.1:1080 could not connect to it (host unreachable or its name cannot be resolved)")
        let wantsPassword = TransportFailure.map(SOCKSError.InvalidAuthenticationSelection(selection: .usernamePassword), url: url, proxy: proxy)
        #expect(wantsPassword.code == .unsupportedProxy)
        #expect(wantsPassword.message.contains("wants a user name and password"))
        #expect(!wantsPassword.isTransient)
        let notSOCKS = TransportFailure.map(SOCKSError.InvalidProtocolVersion(actual: 0x48), url: url, proxy: proxy)
        #expect(notSOCKS.code == .unsupportedProxy)
        #expect(notSOCKS.message == "files.example:8443: socks5h://127.0.0.1:1080 does not answer as a SOCKS5 proxy")
        let timeout = TransportFailure.map(HTTPClientError.socksHandshakeTimeout, url: url, proxy: proxy)
        #expect(timeout.code == .timeout)
        // Without a proxy, the same refusal is the server's.
        #expect(TransportFailure.map(IOError(errnoCode: ECONNREFUSED, reason: "connect"), url: url).message.hasPrefix("files.example:8443: connection refused"))
    }

    /// The default port is the scheme's; IPv6 addresses are bracketed.
    @Test func places() {
        #expect(TransportFailure.place(URL(string: "http://h/x")!) == "h:80")
        #expect(TransportFailure.place(URL(string: "https://h/x")!) == "h:443")
        #expect(TransportFailure.place(URL(string: "http://[::1]:81/x")!) == "[::1]:81")
    }
}
