import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// An in-process HTTP server with scripted faults, for Haul's end-to-end tests and benchmarks.
///
/// Tests need a real socket (the engine's transport, redirects and connection handling are what
/// is under test) but full control over what the server does, request by request. Each test
/// starts its own server on a random port, so tests run in parallel without sharing state; the
/// per-key state (request counters, content versions, recorded requests) lives here.
///
/// See `FileOptions` for the `/file` query parameters and `TestServerResponder` for the routes.
public final class TestServer: Sendable {
    /// The address the server is bound to, as given to `start`.
    public let host: String
    /// The port the server is listening on (the real one when started with port 0).
    public let port: Int
    private let state: ServerState
    private let group: ServiceGroup
    private let runTask: Task<Void, any Error>

    /// How long `shutdown` lets responses still in flight finish before it cuts them.
    static let drainLimit: Duration = .milliseconds(500)

    private init(host: String, port: Int, state: ServerState, group: ServiceGroup, runTask: Task<Void, any Error>) {
        self.host = host
        self.port = port
        self.state = state
        self.group = group
        self.runTask = runTask
    }

    deinit {
        // A server nobody shut down must not keep its port and threads for the rest of the run.
        self.runTask.cancel()
    }

    /// Starts on 127.0.0.1 and a random port (port 0) unless told otherwise; returns once listening.
    ///
    /// Logging is off unless `HAUL_TEST_SERVER_LOG_LEVEL` names a level (e.g. `debug`), so test
    /// output and the standalone tool's stdout stay clean.
    public static func start(host: String = "127.0.0.1", port: Int = 0) async throws -> TestServer {
        let state = ServerState()
        let (bound, boundContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "HaulTestServer")
        logger.logLevel = Environment().get("HAUL_TEST_SERVER_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .critical
        let application = Application(
            responder: TestServerResponder(state: state),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                boundContinuation.yield(channel.localAddress?.port ?? port)
                boundContinuation.finish()
            },
            logger: logger
        )
        // In a service group of its own, so that `shutdown` can ask for a graceful shutdown.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        let runTask = Task {
            defer { boundContinuation.finish() }
            try await group.run()
        }
        return try await withTaskCancellationHandler {
            for await boundPort in bound {
                return TestServer(host: host, port: boundPort, state: state, group: group, runTask: runTask)
            }
            // The server stopped before it listened: surface its error (e.g. port in use).
            try await runTask.value
            throw TestServerError(message: "the server stopped before it was listening on \(host):\(port)")
        } onCancel: {
            runTask.cancel()
        }
    }

    /// `http://127.0.0.1:PORT` (IPv6 hosts in brackets; wildcard hosts as their loopback).
    public var baseURL: String {
        let reachable =
            switch self.host {
            case "0.0.0.0": "127.0.0.1"
            case "::": "::1"
            default: self.host
            }
        return reachable.contains(":") ? "http://[\(reachable)]:\(self.port)" : "http://\(reachable):\(self.port)"
    }

    /// baseURL + path + percent-encoded query (sorted keys for stability).
    ///
    /// Every character but RFC 3986's unreserved ones is escaped, so hostile values such as
    /// `disposition` headers survive the trip intact.
    public func url(_ path: String, _ query: [String: String] = [:]) -> String {
        let path = path.hasPrefix("/") ? path : "/" + path
        guard !query.isEmpty else { return self.baseURL + path }
        return self.baseURL + path + (path.contains("?") ? "&" : "?") + QueryParameters.encode(query)
    }

    /// Stops listening and closes every connection; responses still in flight after
    /// `drainLimit` (a throttled or stalled download a test left behind) are aborted.
    ///
    /// Graceful first: cancelling the server while it has just accepted a connection that it
    /// has not started serving trips a precondition in NIO (the connection's writer is released
    /// unfinished; apple/swift-nio#3481), which crashed a test run now and then. A graceful
    /// shutdown closes the listener and serves or closes every accepted connection first.
    public func shutdown() async throws {
        self.state.releaseAll()
        await self.group.triggerGracefulShutdown()
        let runTask = self.runTask
        await withTaskGroup(of: Bool.self) { race in
            race.addTask {
                _ = await runTask.result
                return true
            }
            race.addTask {
                try? await Task.sleep(for: Self.drainLimit)
                return false
            }
            let drained = await race.next() ?? false
            // Awaiting a task's result ignores cancellation: the server must stop for the race to end.
            if !drained { runTask.cancel() }
            race.cancelAll()
        }
        if case .failure(let error) = await runTask.result, !(error is CancellationError) {
            throw error
        }
    }

    /// Requests seen for a key (the `key=` query value, else the path), in order of arrival.
    public func requests(forKey key: String) -> [RecordedRequest] {
        self.state.requests(forKey: key)
    }

    /// Body bytes of `/file` responses for a key handed to connections so far, over all its
    /// requests (error bodies and redirects not counted).
    ///
    /// A write counts as it is handed over (so a client that has received bytes always finds
    /// them counted) unless the connection refuses it; bytes lost in a socket when a client
    /// died count too. This is what the server spent, an upper bound of what clients received:
    /// crash tests use it to bound the bytes fetched more than once.
    public func bytesSent(forKey key: String) -> Int {
        self.state.bytesSent(forKey: key)
    }

    /// The most `/file` response bodies for a key that were being sent at the same time: more
    /// than one shows that a client really fetched over several connections at once.
    public func peakConcurrentResponses(forKey key: String) -> Int {
        self.state.peakStreaming(forKey: key)
    }

    /// The most `/file` response bodies being sent at the same time over every key: what a
    /// limit on downloads at once (across processes, too) is checked against.
    public func peakConcurrentResponses() -> Int {
        self.state.peakStreamingOverall()
    }

    /// `/file` response bodies for a key being sent right now (0 once every client hung up
    /// or was served).
    public func responsesInProgress(forKey key: String) -> Int {
        self.state.streamingNow(forKey: key)
    }

    /// The content version currently served for a key: 0, plus one per change.
    ///
    /// The bytes served are `TestContent.bytes(seed: seed &+ UInt64(version), size:)`.
    public func contentVersion(forKey key: String) -> Int {
        self.state.version(forKey: key)
    }

    /// Lets the bodies of a key that `hold=N` stopped at offset N go on, and every later one
    /// pass N without stopping.
    public func release(key: String) {
        self.state.release(key: key)
    }

    /// Bumps the content version of a key: new bytes (seed+version), new ETag and Last-Modified.
    public func changeContent(forKey key: String) {
        self.state.changeContent(forKey: key)
    }
}

/// Why a test server could not start.
public struct TestServerError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { self.message }
}

/// Scoped helper: starts a server, runs `body`, and always shuts the server down.
@discardableResult
public func withTestServer<T>(
    host: String = "127.0.0.1",
    port: Int = 0,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestServer) async throws -> T
) async throws -> T {
    let server = try await TestServer.start(host: host, port: port)
    let result: T
    do {
        result = try await body(server)
    } catch {
        try? await server.shutdown()
        throw error
    }
    try await server.shutdown()
    return result
}
