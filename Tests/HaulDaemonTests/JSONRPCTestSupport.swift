import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import NIOConcurrencyHelpers
import NIOCore

/// Helpers for the JSON-RPC and aria2 tests: bodies in and out, a client that speaks to a
/// handler as a server would, a sink that records notifications, and a daemon-like fixture.
enum RPCTest {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Retries in milliseconds and frequent progress, so that tests stay fast.
    static func fastConfiguration(maxConcurrent: Int = 4) -> DownloadManager.Configuration {
        DownloadManager.Configuration(
            maxConcurrentDownloads: maxConcurrent,
            retry: RetryPolicy(maxRetries: 0, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20)),
            progressInterval: .milliseconds(20),
            checkpointBytes: 64 * 1024,
            checkpointInterval: .milliseconds(100),
            connectTimeout: .seconds(5),
            readTimeout: .seconds(10))
    }

    /// A throttle that spaces checks by a millisecond: its behaviour is tested on its own.
    static let quickThrottle = SecretThrottle.Policy(base: .milliseconds(1), cap: .milliseconds(2))

    static func decode(_ buffer: ByteBuffer?) throws -> JSONValue? {
        guard let buffer else { return nil }
        return try JSONDecoder().decode(JSONValue.self, from: Data(buffer.readableBytesView))
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: JSONRPCEncoding.encode(value), as: UTF8.self)
    }

    static func requestText(_ method: String, _ params: [JSONValue], id: JSONValue? = 1) -> String {
        var object: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method), "params": .array(params)]
        if let id { object["id"] = id }
        return text(.object(object))
    }
}

/// Speaks to a handler as the daemon's servers do: bytes in, bytes out.
struct HandlerClient: Sendable {
    let handler: any RPCRequestHandler
    var origin = RPCOrigin(transport: .unixSocket)
    /// Put first in every call's params as `token:…` when set.
    var token: String?

    /// The decoded answer to a raw body, nil when there is none.
    func raw(_ body: String) async throws -> JSONValue? {
        try RPCTest.decode(await handler.respond(to: ByteBuffer(string: body), from: origin))
    }

    /// The whole response object of one call.
    func response(_ method: String, _ params: [JSONValue] = []) async throws -> JSONValue {
        let full = (token.map { [JSONValue.string("token:\($0)")] } ?? []) + params
        guard let answer = try await raw(RPCTest.requestText(method, full)) else {
            throw RPCTest.Failure("no answer to \(method)")
        }
        return answer
    }

    /// The result of a call that must succeed.
    func result(_ method: String, _ params: [JSONValue] = []) async throws -> JSONValue {
        let answer = try await response(method, params)
        guard let result = answer["result"] else { throw RPCTest.Failure("\(method) failed: \(RPCTest.text(answer))") }
        return result
    }

    /// The error of a call that must fail.
    func error(_ method: String, _ params: [JSONValue] = []) async throws -> JSONRPCError {
        let answer = try await response(method, params)
        guard let error = answer["error"], case .integer(let code)? = error["code"], let message = error["message"]?.stringValue else {
            throw RPCTest.Failure("\(method) did not fail: \(RPCTest.text(answer))")
        }
        return JSONRPCError(code: Int(code), message: message)
    }
}

/// Records notifications and lets a test wait for one.
final class RecordingSink: RPCNotificationSink {
    private struct State {
        var messages: [JSONValue] = []
        var nextSubscriber = 0
        var subscribers: [Int: AsyncStream<JSONValue>.Continuation] = [:]
    }

    private let state = NIOLockedValueBox(State())

    func broadcast(_ message: ByteBuffer) async {
        guard let value = try? RPCTest.decode(message) else { return }
        let subscribers = state.withLockedValue { state in
            state.messages.append(value)
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    var messages: [JSONValue] { state.withLockedValue { $0.messages } }

    /// The (method, gid) pairs received so far, in order.
    var received: [Received] {
        messages.compactMap { message in
            guard let method = message["method"]?.stringValue,
                  let gid = message["params"]?.arrayValue?.first?["gid"]?.stringValue else { return nil }
            return Received(method: method, gid: gid)
        }
    }

    struct Received: Hashable, Sendable {
        let method: String
        let gid: String
    }

    /// Waits (30 s at most) until what was received satisfies `condition`.
    func waitUntil(_ what: String, _ condition: @escaping @Sendable ([Received]) -> Bool) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self)
        let key = state.withLockedValue { state in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        defer { _ = state.withLockedValue { $0.subscribers.removeValue(forKey: key) } }
        if condition(received) { return }
        _ = try await firstElement(of: stream, what) { [self] _ in condition(self.received) }
    }

    /// Waits (30 s at most) for `method` about `gid`, received before or after the call.
    func waitFor(_ method: String, gid: String) async throws {
        let match: @Sendable (JSONValue) -> Bool = { message in
            message["method"]?.stringValue == method
                && message["params"]?.arrayValue?.first?["gid"]?.stringValue == gid
        }
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self)
        let key = state.withLockedValue { state -> Int? in
            if state.messages.contains(where: match) { return nil }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let key else { return }
        defer { _ = state.withLockedValue { $0.subscribers.removeValue(forKey: key) } }
        _ = try await firstElement(of: stream, "\(method) for \(gid)", where: match)
    }
}

/// A daemon's worth of aria2 for one test: a manager on an in-memory store, the aria2 methods
/// with a download directory, a handler with secret "s3cret", and notifications recorded.
struct Aria2Fixture: Sendable {
    static let secret = "s3cret"

    let server: TestServer
    let manager: DownloadManager
    let service: Aria2Service
    let handler: JSONRPCHandler
    let sink: RecordingSink
    let directory: URL
    let shutdownRequests: NIOLockedValueBox<[Bool]>

    /// Over the unix socket: no secret needed.
    var client: HandlerClient { HandlerClient(handler: handler) }
    /// Over TCP with the right secret.
    var tcpClient: HandlerClient { HandlerClient(handler: handler, origin: RPCOrigin(transport: .tcp), token: Self.secret) }

    /// `transfers` configures the manager and the aria2 defaults as `haul daemon` does.
    static func run<T: Sendable>(
        maxConcurrent: Int = 4, limits: JSONRPCLimits = JSONRPCLimits(), transfers: DaemonTransferOptions = DaemonTransferOptions(),
        retry: RetryPolicy? = nil, _ body: @escaping @Sendable (Aria2Fixture) async throws -> T
    ) async throws -> T {
        try await withTestServer { server in
            // In a directory of its own, so that tests can check nothing was written beside it.
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let directory = try temporary.subdirectory("downloads")
            var configuration = RPCTest.fastConfiguration(maxConcurrent: maxConcurrent)
            transfers.apply(to: &configuration, sharing: SpeedLimiter(bytesPerSecond: transfers.maxOverallDownloadLimit))
            if let retry { configuration.retry = retry }
            // As `haul daemon` has it (DaemonAssembly).
            configuration.refusesLinksInDirectories = true
            let manager = DownloadManager(configuration: configuration)
            let requests = NIOLockedValueBox<[Bool]>([])
            let service = try Aria2Service(manager: manager, configuration: Aria2Configuration(
                downloadDirectory: directory, transfers: transfers, requestShutdown: { force in requests.withLockedValue { $0.append(force) } }))
            var methods = RPCMethodTable()
            service.register(in: &methods)
            let handler = JSONRPCHandler(
                methods: methods, secret: try RPCSecret(secret), limits: limits, secretThrottle: RPCTest.quickThrottle)
            let sink = RecordingSink()
            let notifications = Aria2Notifications(manager: manager, sink: sink)
            let forwarding = Task { await notifications.run() }
            let fixture = Aria2Fixture(
                server: server, manager: manager, service: service, handler: handler, sink: sink,
                directory: directory, shutdownRequests: requests)
            do {
                let result = try await body(fixture)
                await manager.shutdown()
                await forwarding.value
                return result
            } catch {
                await manager.shutdown()
                await forwarding.value
                throw error
            }
        }
    }

    func url(_ name: String, size: Int = 1000, seed: Int = 0, rate: Int? = nil, extra: [String: String] = [:]) -> String {
        var query = ["size": "\(size)", "seed": "\(seed)"].merging(extra) { _, new in new }
        if let rate { query["rate"] = "\(rate)" }
        return server.url("/file/\(name)", query)
    }

    /// Adds one URI over the unix socket and returns its GID.
    func add(_ url: String, _ options: [String: JSONValue] = [:], position: Int? = nil) async throws -> String {
        var params: [JSONValue] = [[.string(url)], .object(options)]
        if let position { params.append(.integer(Int64(position))) }
        guard let gid = try await client.result("aria2.addUri", params).stringValue else {
            throw RPCTest.Failure("addUri did not answer a GID")
        }
        return gid
    }

    func status(_ gid: String, _ keys: [String] = []) async throws -> JSONValue {
        try await client.result("aria2.tellStatus", [.string(gid), .array(keys.map(JSONValue.string))])
    }

    /// Waits until the download is completed, failed or removed.
    func finished(_ gid: String) async throws {
        guard let id = DownloadID(gid) else { throw RPCTest.Failure("\(gid) is not a GID") }
        let manager = self.manager
        // Generous: a full suite on two cores can hold a one-second transfer back for long.
        _ = try await withTimeLimit("\(gid) to finish", within: .seconds(90)) { try await manager.finished(id) }
    }

    /// GIDs of a tellWaiting/tellStopped/tellActive result.
    static func gids(_ list: JSONValue) -> [String] {
        (list.arrayValue ?? []).compactMap { $0["gid"]?.stringValue }
    }

    /// Names in the download directory (Haul's own part files included).
    var listing: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }
}
