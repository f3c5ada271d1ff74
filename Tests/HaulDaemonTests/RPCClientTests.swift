import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestSupport
import NIOCore
import Testing

/// The library's JSON-RPC client against a daemon in this process.
@Suite(.timeLimit(.minutes(3))) struct RPCClientTests {
    /// Options as a client would send them to aria2.addUri.
    struct Options: Codable, Equatable, Sendable {
        var dir: String
        var out: String
    }

    /// A call's positional parameters reach the daemon as JSON and its result is decoded, over
    /// the socket and over TCP.
    @Test func callDecodesResult() async throws {
        try await withRunningDaemon(makeHandler: { context in EchoRPCHandler(control: context.control) }) { daemon in
            for endpoint in [daemon.addresses.socketEndpoint, try #require(daemon.addresses.tcpEndpoint)] {
                let echoed: [String] = try await withRPCClient(endpoint: endpoint) { client in
                    try await client.call("test.echo", "a", "b")
                }
                #expect(echoed == ["a", "b"], "\(endpoint)")
            }
            let options: [Options] = try await withRPCClient(endpoint: daemon.addresses.socketEndpoint) { client in
                try await client.call("test.echo", [RPCParameter(Options(dir: "/tmp", out: "x.iso"))])
            }
            #expect(options == [Options(dir: "/tmp", out: "x.iso")])
        }
    }

    /// With a secret, every call carries `"token:SECRET"` as its first parameter.
    @Test func secretIsSentAsFirstParameter() async throws {
        try await withRunningDaemon(makeHandler: { _ in EchoRPCHandler() }) { daemon in
            let endpoint = try #require(daemon.addresses.tcpEndpoint)
            let echoed: [String] = try await withRPCClient(endpoint: endpoint, secret: "s3cret") { client in
                try await client.call("test.echo", "x")
            }
            #expect(echoed == ["token:s3cret", "x"])
        }
    }

    /// A JSON-RPC error object becomes `.rpcError` with its number, or the daemon's own
    /// `HaulError` code when it names one in `data.haulCode`.
    @Test func errorObjectsBecomeHaulErrors() async throws {
        try await withRunningDaemon(makeHandler: { _ in ScriptedHandler() }) { daemon in
            try await withRPCClient(endpoint: daemon.addresses.socketEndpoint) { client in
                await #expect {
                    let _: String = try await client.call("fail.plain")
                } throws: { error in
                    let error = error as? HaulError
                    return error?.code == .rpcError && error?.rpcCode == 1 && error?.message.contains("GID 2089b05ecca3d829 is not found") == true
                }
                await #expect {
                    let _: String = try await client.call("fail.known")
                } throws: { error in
                    let error = error as? HaulError
                    return error?.code == .unknownDownload && error?.rpcCode == 1 && error?.message == "no such download"
                }
            }
        }
    }

    /// A JSON null result decodes into an optional; an answer with another call's id, or one
    /// that is not JSON-RPC, is `.invalidResponse`.
    @Test func unusualAnswers() async throws {
        try await withRunningDaemon(makeHandler: { _ in ScriptedHandler() }) { daemon in
            try await withRPCClient(endpoint: daemon.addresses.socketEndpoint) { client in
                let none: String? = try await client.call("answer.null")
                #expect(none == nil)
                await #expect {
                    let _: String = try await client.call("answer.wrongID")
                } throws: { ($0 as? HaulError)?.code == .invalidResponse }
                await #expect {
                    let _: String = try await client.call("answer.garbage")
                } throws: { ($0 as? HaulError)?.code == .invalidResponse }
            }
        }
    }

    /// A call larger than the daemon accepts fails with `.rpcError` and HTTP status 413.
    @Test func oversizedCallIsRefused() async throws {
        try await withRunningDaemon(configure: { $0.maxRequestBytes = 1024 }, makeHandler: { _ in EchoRPCHandler() }) { daemon in
            try await withRPCClient(endpoint: daemon.addresses.socketEndpoint) { client in
                await #expect {
                    let _: [String] = try await client.call("test.echo", String(repeating: "z", count: 4096))
                } throws: { error in
                    let error = error as? HaulError
                    return error?.code == .rpcError && error?.rpcCode == -32600 && error?.message.contains("at most 1024 bytes") == true
                }
                let small: [String] = try await client.call("test.echo", "fits")
                #expect(small == ["fits"])
            }
        }
    }

    /// Without a daemon at the socket or the port, a call fails at once with `.daemonUnavailable`.
    @Test func missingDaemonIsUnavailable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for endpoint in [DaemonEndpoint.unixSocket(path: directory.path("none.sock")), .tcp(port: 1)] {
            try await withRPCClient(endpoint: endpoint, configuration: .init(timeout: .seconds(20))) { client in
                let started = ContinuousClock.now
                await #expect {
                    let _: String = try await client.call("aria2.getVersion")
                } throws: { ($0 as? HaulError)?.code == .daemonUnavailable }
                // Far below the timeout: the client did not keep retrying the connection.
                #expect(ContinuousClock.now - started < .seconds(10))
            }
        }
    }

    /// The URL the client posts to, for each kind of endpoint.
    @Test func requestURLs() {
        #expect(RPCClient.requestURL(for: .tcp(port: 6800)) == "http://127.0.0.1:6800/jsonrpc")
        #expect(RPCClient.requestURL(for: .tcp(host: "::1", port: 6800)) == "http://[::1]:6800/jsonrpc")
        #expect(RPCClient.requestURL(for: .unixSocket(path: "/run/user/1/haul/haul.sock"))
            == "http+unix://%2Frun%2Fuser%2F1%2Fhaul%2Fhaul.sock/jsonrpc")
    }
}

/// Answers by method name with canned JSON, to exercise the client's reading of answers.
struct ScriptedHandler: RPCRequestHandler {
    func respond(to body: ByteBuffer, from origin: RPCOrigin) async -> ByteBuffer? {
        guard let call = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
              let method = call["method"] as? String, let id = call["id"] as? String
        else { return ByteBuffer(string: "not json-rpc") }
        let answer = switch method {
        case "fail.plain": #"{"jsonrpc":"2.0","id":"\#(id)","error":{"code":1,"message":"GID 2089b05ecca3d829 is not found"}}"#
        case "fail.known": #"{"jsonrpc":"2.0","id":"\#(id)","error":{"code":1,"message":"no such download","data":{"haulCode":"unknownDownload"}}}"#
        case "answer.null": #"{"jsonrpc":"2.0","id":"\#(id)","result":null}"#
        case "answer.wrongID": #"{"jsonrpc":"2.0","id":"someone-else","result":"x"}"#
        default: "<html>not json</html>"
        }
        return ByteBuffer(string: answer)
    }
}
