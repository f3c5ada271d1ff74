import AsyncHTTPClient
import Foundation
@testable import HaulDaemon
import HaulTestSupport
import NIOCore
import Testing

/// JSON-RPC over HTTP POST on both listeners, and the request-size bound.
@Suite(.timeLimit(.minutes(3))) struct ServerHTTPTests {
    private static func post(
        _ client: HTTPClient, _ target: ServerTestTarget, body: HTTPClientRequest.Body, path: String = "/jsonrpc"
    ) async throws -> (status: Int, contentType: String?, body: String) {
        let url = switch target {
        case .unixSocket(let socket): URL(httpURLWithSocketPath: socket, uri: path)!.absoluteString
        case .tcp(let port): "http://127.0.0.1:\(port)\(path)"
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.body = body
        let response = try await client.execute(request, timeout: .seconds(20))
        let answer = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers.first(name: "content-type"), String(buffer: answer))
    }


    /// A POST on the unix socket and one on TCP both reach the handler, each with its own
    /// origin, and get its answer back as application/json.
    @Test func postReachesHandlerOnBothTransports() async throws {
        try await withRunningDaemon { daemon in
            try await withHTTPClient { client in
                let overSocket = try await Self.post(client, daemon.socketTarget, body: .bytes(ByteBuffer(string: "one")))
                #expect(overSocket.status == 200)
                #expect(overSocket.contentType == "application/json")
                #expect(overSocket.body == #"{"echo":"one","origin":"unixSocket"}"#)
                let overTCP = try await Self.post(client, daemon.tcpTarget, body: .bytes(ByteBuffer(string: "two")))
                #expect(overTCP.status == 200)
                #expect(overTCP.body == #"{"echo":"two","origin":"tcp"}"#)
            }
        }
    }

    /// A body the handler has no answer for (only notifications) gets 204 and no body.
    @Test func notificationGetsNoContent() async throws {
        try await withRunningDaemon { daemon in
            try await withHTTPClient { client in
                let answer = try await Self.post(client, daemon.socketTarget, body: .bytes(ByteBuffer(string: "notify")))
                #expect(answer.status == 204)
                #expect(answer.body.isEmpty)
            }
        }
    }

    /// Paths other than /jsonrpc are not found.
    @Test func otherPathsAreNotFound() async throws {
        try await withRunningDaemon { daemon in
            try await withHTTPClient { client in
                let answer = try await Self.post(client, daemon.tcpTarget, body: .bytes(ByteBuffer(string: "x")), path: "/rpc")
                #expect(answer.status == 404)
            }
        }
    }

    /// A request announcing a body over the limit is refused with 413 and a JSON-RPC error
    /// before any of the body is sent, and the daemon goes on answering others.
    @Test func declaredOversizedBodyIsRefusedUnread() async throws {
        try await withRunningDaemon(configure: { $0.maxRequestBytes = 4096 }) { daemon in
            for target in [daemon.socketTarget, daemon.tcpTarget] {
                let answer = try await ServerTestRawConnection.exchange(target, sending:
                    "POST /jsonrpc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 413"), "\(target): \(answer)")
                #expect(answer.contains(#""code":-32600"#))
                #expect(answer.contains("at most 4096 bytes"))
            }
            try await withHTTPClient { client in
                let after = try await Self.post(client, daemon.tcpTarget, body: .bytes(ByteBuffer(string: "still here")))
                #expect(after.status == 200)
            }
        }
    }

    /// A chunked body that grows past the limit is refused with 413 once it does; a body at
    /// the limit is accepted.
    @Test func chunkedOversizedBodyIsRefused() async throws {
        try await withRunningDaemon(configure: { $0.maxRequestBytes = 4096 }) { daemon in
            try await withHTTPClient { client in
                let (chunks, producer) = AsyncStream.makeStream(of: ByteBuffer.self)
                for _ in 0..<64 { producer.yield(ByteBuffer(repeating: UInt8(ascii: "a"), count: 1024)) }
                producer.finish()
                let tooLong = try await Self.post(client, daemon.socketTarget, body: .stream(chunks, length: .unknown))
                #expect(tooLong.status == 413)
                let atLimit = ByteBuffer(repeating: UInt8(ascii: "b"), count: 4096)
                let accepted = try await Self.post(client, daemon.socketTarget, body: .bytes(atLimit))
                #expect(accepted.status == 200)
                #expect(accepted.body.contains(String(repeating: "b", count: 4096)))
            }
        }
    }

    /// A request that is not HTTP gets 400, and the daemon keeps serving.
    @Test func malformedRequestGetsBadRequest() async throws {
        try await withRunningDaemon { daemon in
            // Read up to the end of the answer's head: when the daemon closes the connection
            // afterwards depends on the load of the machine, and is not what this test is about.
            let answer = try await ServerTestRawConnection.exchange(
                daemon.socketTarget, sending: "NOT HTTP AT ALL\r\n\r\n", until: { $0.contains("\r\n\r\n") })
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            try await withHTTPClient { client in
                let after = try await Self.post(client, daemon.socketTarget, body: .bytes(ByteBuffer(string: "ok")))
                #expect(after.status == 200)
            }
        }
    }

    /// A slow request on one connection does not hold up a request on another.
    @Test func slowRequestDoesNotBlockOthers() async throws {
        let gate = ServerTestGate()
        try await withRunningDaemon(makeHandler: { _ in GatedHandler(gate: gate) }) { daemon in
            try await withHTTPClient { client in
                let slow = Task { try await Self.post(client, daemon.tcpTarget, body: .bytes(ByteBuffer(string: "wait"))) }
                try await waitUntil("the slow request to arrive") { await gate.isWaiting }
                let quick = try await Self.post(client, daemon.tcpTarget, body: .bytes(ByteBuffer(string: "go")))
                #expect(quick.body == "go")
                await gate.open()
                #expect(try await slow.value.body == "wait")
            }
        }
    }
}

/// Holds requests whose body is `wait` until opened.
actor ServerTestGate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var isOpen = false

    var isWaiting: Bool { !waiters.isEmpty }

    func pass() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

/// Answers each body with itself, after the gate opens for the body `wait`.
struct GatedHandler: RPCRequestHandler {
    let gate: ServerTestGate

    func respond(to body: ByteBuffer, from origin: RPCOrigin) async -> ByteBuffer? {
        if String(buffer: body) == "wait" { await gate.pass() }
        return body
    }
}
