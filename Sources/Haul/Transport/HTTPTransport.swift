import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The one HTTP client every transfer shares: connection reuse (and HTTP/2 where the server
/// offers it) across all downloads of a manager.
///
/// Redirects are followed here rather than by AsyncHTTPClient, so that Haul decides what is
/// allowed (http and https only, a bounded depth, no loops), records the final URL, and keeps
/// the Range headers on every hop.
final class HTTPTransport: Sendable {
    struct Configuration: Sendable {
        var connectTimeout: Duration
        var redirectLimit: Int
        var userAgent: String
        var tls: TLSSettings
        var proxy: ProxySettings
        /// Upper bound of connections AsyncHTTPClient opens to one host. Haul's scheduler does
        /// the real limiting; this must not be lower, or it becomes a hidden cap.
        var connectionsPerHost: Int
    }

    /// A response whose body is still to be read.
    struct Response: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: HTTPClientResponse.Body
        var finalURL: URL

        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// The client for direct connections, and one per proxy in use: AsyncHTTPClient sets its
    /// proxy per client (at most two here, one for http and one for https URLs).
    private let direct: HTTPClient
    private let viaProxy: [ProxySettings.Proxy: HTTPClient]
    /// Proxies that are set but cannot be used (SOCKS with credentials, say): the requests
    /// meant for them fail with the reason, and never go direct instead.
    private let unusableProxies: [ProxySettings.Proxy: HaulError]
    /// Set when the TLS files could not be loaded: every request fails with it (callers that
    /// want to refuse bad files up front call `TLSSettings.validate()` first).
    private let tlsFailure: HaulError?
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 64 * 1024, maximum: 1 << 20)
    /// The flow-control window each HTTP/2 stream starts with: AsyncHTTPClient's own target
    /// for it (it widens a stream's window to 8 MiB after its first DATA frame). HTTP/2's
    /// default is 65,535 bytes, so a body of 64 KiB or more waited a round trip for that
    /// first widening: over a link of 40 ms, 600 files of 64 KiB took 3.4 s against curl's
    /// 1.8 s (curl starts its streams with 32 MiB).
    static let http2StreamWindow = 8 * 1024 * 1024
    let configuration: Configuration

    init(configuration: Configuration) {
        self.configuration = configuration
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            // No read timeout here: the client's would count the waits a speed limit imposes
            // as silence. The manager's watchdog times reads out instead (`LiveTransfer`).
            timeout: HTTPClient.Configuration.Timeout(connect: .nanoseconds(configuration.connectTimeout.inNanoseconds)),
            decompression: .disabled)
        clientConfiguration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, configuration.connectionsPerHost))
        // AsyncHTTPClient would otherwise retry a refused connection until the connect timeout;
        // Haul's own retry policy (with backoff, and counted) decides instead.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        clientConfiguration.httpVersion = .automatic
        var tlsFailure: HaulError?
        if !configuration.tls.isDefault {
            do {
                clientConfiguration.tlsConfiguration = try configuration.tls.makeConfiguration()
            } catch {
                tlsFailure = error
            }
        }
        self.tlsFailure = tlsFailure
        // Without this, every request builds a span and its attributes for the global tracer,
        // which is a no-op unless the program bootstrapped one; Haul does not trace requests.
        clientConfiguration.tracing.tracer = nil
        // NIO reads at most 64 KiB per read by default; every read is a hop from the event loop
        // to the transfer task. Reading up to 1 MiB when that much is waiting cuts the hops
        // (and the system calls) of a fast download by an order of magnitude.
        clientConfiguration.http1_1ConnectionDebugInitializer = { channel in
            channel.setOption(ChannelOptions.recvAllocator, value: Self.receiveAllocator)
        }
        clientConfiguration.http2ConnectionDebugInitializer = { channel in
            channel.setOption(ChannelOptions.recvAllocator, value: Self.receiveAllocator).flatMap {
                Self.widenStreamWindows(on: channel)
            }
        }
        self.direct = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var viaProxy: [ProxySettings.Proxy: HTTPClient] = [:]
        var unusableProxies: [ProxySettings.Proxy: HaulError] = [:]
        for proxy in [configuration.proxy.http, configuration.proxy.https].compactMap({ $0 })
        where viaProxy[proxy] == nil && unusableProxies[proxy] == nil {
            if let problem = proxy.problem {
                unusableProxies[proxy] = problem
                continue
            }
            var proxied = clientConfiguration
            switch proxy.kind {
            case .http:
                let authorization = proxy.username.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
                proxied.proxy = .server(host: proxy.host, port: proxy.port, authorization: authorization)
            case .socks5, .socks5h:
                // AsyncHTTPClient sends the URL's host name to the proxy (SOCKS5 "domain name"
                // address) and offers no authentication: `Proxy.problem` refused credentials.
                proxied.proxy = .socksServer(host: proxy.host, port: proxy.port)
            }
            viaProxy[proxy] = HTTPClient(eventLoopGroupProvider: .singleton, configuration: proxied)
        }
        self.viaProxy = viaProxy
        self.unusableProxies = unusableProxies
    }

    /// Asks the server of an HTTP/2 connection to start every stream with `http2StreamWindow`
    /// (a SETTINGS frame). Called once the server's SETTINGS arrived and before any request is
    /// sent on the connection: the server applies it before it sees a stream (SETTINGS may be
    /// sent at any time and are applied in order), and acknowledges it before their DATA.
    static func widenStreamWindows(on channel: any Channel) -> EventLoopFuture<Void> {
        let settings = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .initialWindowSize, value: http2StreamWindow)])))
        return channel.writeAndFlush(settings)
    }

    func shutdown() async {
        try? await direct.shutdown()
        for client in viaProxy.values { try? await client.shutdown() }
    }

    /// The client that reaches `url`, and its proxy: through the proxy for its scheme, unless
    /// `noProxy` names its host. A proxy without a client is an unusable one: its reason is
    /// thrown, so that a request meant for a proxy never goes out directly.
    private func client(for url: URL) throws(HaulError) -> (HTTPClient, ProxySettings.Proxy?) {
        guard let proxy = configuration.proxy.proxy(for: url) else { return (direct, nil) }
        guard let client = viaProxy[proxy] else {
            throw unusableProxies[proxy] ?? HaulError(.unsupportedProxy, "\(proxy) cannot be used")
        }
        return (client, proxy)
    }

    /// Sends a GET and follows redirects. The caller must read or drop the returned body.
    /// User info in `url` is sent as Basic `Authorization` to its host (and only there).
    func get(_ url: URL, headers: [HeaderField]) async throws(HaulError) -> Response {
        var sendHeaders = URLCredentials.headers(headers, for: url)
        let url = URLCredentials.split(url).url
        var current = url
        // Made at the first redirect: most requests have none.
        var visited: Set<String> = []
        for _ in 0...configuration.redirectLimit {
            let response = try await send(current, headers: sendHeaders)
            let status = Int(response.status.code)
            guard [301, 302, 303, 307, 308].contains(status) else {
                return Response(status: status, headers: response.headers, body: response.body, finalURL: current)
            }
            // A redirect's own body is small by design; drain it so the connection can be reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard let location = response.headers.first(name: "location"),
                  let next = URL(string: location, relativeTo: current)?.absoluteURL
            else {
                throw HaulError(.unsupportedRedirect, "\(current) redirected (\(status)) without a usable Location")
            }
            let scheme = next.scheme?.lowercased() ?? ""
            guard scheme == "http" || scheme == "https", next.host?.isEmpty == false else {
                throw HaulError(.unsupportedRedirect, "\(current) redirected to \(location); only http and https are followed")
            }
            if visited.isEmpty { visited.insert(url.absoluteString) }
            guard visited.insert(next.absoluteString).inserted else {
                throw HaulError(.redirectLoop, "redirect loop: \(next) was already visited")
            }
            sendHeaders = Self.headers(sendHeaders, from: current, to: next)
            current = next
        }
        throw HaulError(.tooManyRedirects, "\(url) redirected more than \(configuration.redirectLimit) times")
    }

    /// The headers to send to `destination` when they were given for `origin`: credentials
    /// and cookies are for the server they were given for (host and port), and are dropped
    /// when a redirect leads elsewhere.
    static func headers(_ headers: [HeaderField], from origin: URL, to destination: URL) -> [HeaderField] {
        guard destination.host?.lowercased() != origin.host?.lowercased() || port(of: destination) != port(of: origin) else {
            return headers
        }
        return headers.filter { !["authorization", "cookie", "proxy-authorization"].contains($0.name.lowercased()) }
    }

    private static func port(of url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }

    private func send(_ url: URL, headers: [HeaderField]) async throws(HaulError) -> HTTPClientResponse {
        if let tlsFailure { throw tlsFailure }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: configuration.userAgent)
        // Haul stores exactly the bytes of the file; an encoded body could not be resumed.
        request.headers.add(name: "Accept-Encoding", value: "identity")
        for field in headers {
            if field.name.lowercased() == "user-agent" || field.name.lowercased() == "accept-encoding" {
                request.headers.replaceOrAdd(name: field.name, value: field.value)
            } else {
                request.headers.add(name: field.name, value: field.value)
            }
        }
        let (client, proxy) = try client(for: url)
        do {
            return try await client.execute(request, deadline: .distantFuture)
        } catch {
            throw Self.map(error, url: url, proxy: proxy)
        }
    }

    /// Maps AsyncHTTPClient and NIO errors to Haul's; everything network-shaped is transient,
    /// a response that breaks HTTP is not (`ProtocolViolation`).
    static func map(_ error: any Error, url: URL, proxy: ProxySettings.Proxy? = nil) -> HaulError {
        TransportFailure.map(error, url: url, proxy: proxy)
    }
}
