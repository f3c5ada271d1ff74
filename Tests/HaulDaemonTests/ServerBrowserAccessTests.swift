import AsyncHTTPClient
import Foundation
@testable import HaulDaemon
import NIOCore
import NIOHTTP1
import Testing

/// Browsers at `/jsonrpc`: CORS preflights and headers for allowed pages, refusal of the others
/// (before the handler runs), and the GET and JSONP forms of a call.
@Suite(.timeLimit(.minutes(3))) struct ServerBrowserAccessTests {
    struct Answer {
        let status: Int
        let headers: HTTPHeaders
        let body: String
    }

    private static func send(
        _ port: Int, method: HTTPMethod, path: String = "/jsonrpc", headers: [(String, String)] = [], body: String? = nil
    ) async throws -> Answer {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            let response = try await client.execute(request, timeout: .seconds(20))
            let collected = try await response.body.collect(upTo: 1 << 20)
            try await client.shutdown()
            return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: collected))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// With `--rpc-allow-origin-all`, a preflight gets aria2's answer and a POST carries `*`.
    @Test func allowAllAnswersPreflightAndPost() async throws {
        try await withRunningDaemon(configure: { $0.allowedOrigins = RPCOriginPolicy(allowsAll: true) }) { daemon in
            let port = daemon.addresses.tcpPort ?? 0
            let preflight = try await Self.send(port, method: .OPTIONS, headers: [
                ("Origin", "http://page.test:8080"), ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "content-type"),
            ])
            #expect(preflight.status == 200)
            #expect(preflight.headers.first(name: "access-control-allow-origin") == "*")
            #expect(preflight.headers.first(name: "access-control-allow-methods") == "POST, GET, OPTIONS")
            #expect(preflight.headers.first(name: "access-control-allow-headers") == "content-type")
            #expect(preflight.headers.first(name: "access-control-max-age") == "1728000")
            let post = try await Self.send(port, method: .POST, headers: [("Origin", "http://page.test:8080")], body: "hello")
            #expect(post.status == 200)
            #expect(post.headers.first(name: "access-control-allow-origin") == "*")
            #expect(post.body == #"{"echo":"hello","origin":"tcp"}"#)
        }
    }

    /// A listed origin is echoed back (with `Vary: Origin`); another page is refused with 403
    /// and its call never reaches the handler, preflight and WebSocket upgrade included.
    @Test func listedOriginIsAllowedOthersRefused() async throws {
        let handler = RecordingHandler()
        try await withRunningDaemon(
            configure: { $0.allowedOrigins = RPCOriginPolicy(origins: ["http://good.test:3000"]) },
            makeHandler: { _ in handler }
        ) { daemon in
            let port = daemon.addresses.tcpPort ?? 0
            let good = try await Self.send(port, method: .POST, headers: [("Origin", "http://good.test:3000")], body: "a")
            #expect(good.status == 200)
            #expect(good.headers.first(name: "access-control-allow-origin") == "http://good.test:3000")
            #expect(good.headers.first(name: "vary") == "Origin")
            #expect(await handler.origins.count == 1)
            let bad = try await Self.send(port, method: .POST, headers: [("Origin", "http://evil.test")], body: "b")
            #expect(bad.status == 403)
            #expect(bad.headers.first(name: "access-control-allow-origin") == nil)
            #expect(bad.body.contains("--rpc-allow-origin http://evil.test"))
            let badPreflight = try await Self.send(port, method: .OPTIONS, headers: [("Origin", "http://evil.test")])
            #expect(badPreflight.status == 403)
            let badUpgrade = try await Self.send(port, method: .GET, headers: [
                ("Origin", "http://evil.test"), ("Connection", "Upgrade"), ("Upgrade", "websocket"),
                ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ])
            // The upgrade is declined (the HTTP side then answers 400 or 403), never switched.
            #expect(badUpgrade.status == 403 || badUpgrade.status == 400)
            #expect(await handler.origins.count == 1)
        }
    }

    /// Without any allowed origin, the daemon's own page (Origin matching Host) is still served,
    /// and a request without Origin (not a browser) is served without CORS headers.
    @Test func ownPageAndNonBrowsersNeedNoPermission() async throws {
        try await withRunningDaemon { daemon in
            let port = daemon.addresses.tcpPort ?? 0
            let own = try await Self.send(port, method: .POST, headers: [("Origin", "http://127.0.0.1:\(port)")], body: "own")
            #expect(own.status == 200)
            #expect(own.headers.first(name: "access-control-allow-origin") == nil)
            let plain = try await Self.send(port, method: .POST, body: "plain")
            #expect(plain.status == 200)
            let other = try await Self.send(port, method: .POST, headers: [("Origin", "http://127.0.0.1:1")], body: "x")
            #expect(other.status == 403)
        }
    }

    /// `GET /jsonrpc?method&id&params=base64` reaches the handler as the equivalent POST body;
    /// `jsoncallback` wraps the answer as JSONP; a callback that is not a name is refused.
    @Test func getAndJSONPReachTheHandler() async throws {
        try await withRunningDaemon { daemon in
            let port = daemon.addresses.tcpPort ?? 0
            let params = Self.base64(#"["token:s",[1]]"#)
            let get = try await Self.send(port, method: .GET, path: "/jsonrpc?method=aria2.tellStatus&id=7&params=\(params)")
            #expect(get.status == 200)
            #expect(get.headers.first(name: "content-type") == "application/json")
            let expected = #"{"id":"7","jsonrpc":"2.0","method":"aria2.tellStatus","params":["token:s",[1]]}"#
            let escaped = expected.replacingOccurrences(of: "\"", with: "\\\"")
            #expect(get.body == #"{"echo":"\#(escaped)","origin":"tcp"}"#)
            let jsonp = try await Self.send(port, method: .GET, path: "/jsonrpc?method=m&id=1&jsoncallback=app.done_1")
            #expect(jsonp.headers.first(name: "content-type") == "text/javascript")
            #expect(jsonp.body.hasPrefix("app.done_1({") && jsonp.body.hasSuffix("})"))
            let hostile = try await Self.send(port, method: .GET, path: "/jsonrpc?method=m&id=1&jsoncallback=alert(1)//")
            #expect(hostile.status == 400)
        }
    }

    /// Over HTTP, a single error answer is 400 and a result or a batch is 200, as from aria2;
    /// the same for GET, while JSONP stays 200 so that the page's callback runs.
    @Test func statusesFollowAria2() async throws {
        var table = RPCMethodTable()
        table.register("test.echo", secret: .notRequired) { parameters, _ in .array(parameters.values) }
        let handler = JSONRPCHandler(methods: table, secret: try RPCSecret("x"))
        try await withRunningDaemon(makeHandler: { _ in handler }) { daemon in
            let port = daemon.addresses.tcpPort ?? 0
            let result = try await Self.send(port, method: .POST, body: #"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":[2]}"#)
            #expect(result.status == 200 && result.body.contains(#""result":[2]"#))
            let noID = try await Self.send(port, method: .POST, body: #"{"jsonrpc":"2.0","method":"test.echo"}"#)
            #expect(noID.status == 400 && noID.body.contains("-32600"))
            let batch = try await Self.send(port, method: .POST, body: #"[{"jsonrpc":"2.0","method":"test.echo"}]"#)
            #expect(batch.status == 200 && batch.body.contains("-32600"))
            let empty = try await Self.send(port, method: .POST, body: "[]")
            #expect(empty.status == 200 && empty.body == "[]")
            let unknown = try await Self.send(port, method: .GET, path: "/jsonrpc?method=nope&id=1")
            #expect(unknown.status == 400)
            let jsonp = try await Self.send(port, method: .GET, path: "/jsonrpc?method=nope&id=1&jsoncallback=cb")
            #expect(jsonp.status == 200 && jsonp.body.hasPrefix("cb({\"error\""))
            let got = try await Self.send(port, method: .GET, path: "/jsonrpc?method=test.echo&id=g&params=\(Self.base64("[3]"))")
            #expect(got.status == 200 && got.body.contains(#""result":[3]"#))
        }
    }

    /// The policy's decisions, without a server.
    @Test func policyDecisions() {
        let none = RPCOriginPolicy()
        #expect(none.decide(origin: nil, host: "127.0.0.1:6800") == .plain)
        #expect(none.decide(origin: "http://127.0.0.1:6800", host: "127.0.0.1:6800") == .plain)
        #expect(none.decide(origin: "http://localhost:6800", host: "127.0.0.1:6800") == .refused)
        let listed = RPCOriginPolicy(origins: ["HTTP://App.test/"])
        #expect(listed.decide(origin: "http://app.test", host: "h") == .crossOrigin(allowOrigin: "http://app.test"))
        #expect(listed.decide(origin: "null", host: "h") == .refused)
        #expect(RPCOriginPolicy(allowsAll: true).decide(origin: "null", host: "h") == .crossOrigin(allowOrigin: "*"))
    }

    /// Query forms: URL-safe or unpadded base64 and a `+` turned into a space still decode; a
    /// body without method is the decoded params itself; garbage is refused.
    @Test func queryBodies() throws {
        #expect(HTTPQueryRPCEndpoint.decodeBase64("W10") == Data("[]".utf8))
        #expect(HTTPQueryRPCEndpoint.decodeBase64("Pz8_") == Data("???".utf8))
        #expect(HTTPQueryRPCEndpoint.decodeBase64("Pj4 ") == Data(">>>".utf8))
        #expect(HTTPQueryRPCEndpoint.decodeBase64("!!!!") == nil)
        let batch = try HTTPQueryRPCEndpoint.body(method: nil, id: nil, params: Self.base64("[1]")).get()
        #expect(batch == Data("[1]".utf8))
        #expect((try? HTTPQueryRPCEndpoint.body(method: "m", id: "1", params: "***").get()) == nil)
        #expect(HTTPQueryRPCEndpoint.isCallbackName("jQuery_1.$x"))
        #expect(!HTTPQueryRPCEndpoint.isCallbackName("1abc") && !HTTPQueryRPCEndpoint.isCallbackName("a..b"))
    }
}
