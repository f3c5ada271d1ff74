import Foundation
import Haul
@testable import HaulDaemon
import HaulTestSupport
import Logging
import NIOCore

/// Where a test client connects: the daemon's socket or its TCP port.
enum ServerTestTarget: Sendable, CustomStringConvertible {
    case unixSocket(String)
    case tcp(port: Int)

    var description: String {
        switch self {
        case .unixSocket(let path): "unix:\(path)"
        case .tcp(let port): "tcp:\(port)"
        }
    }
}

/// A handler for server tests: answers each body with `{"echo": BODY, "origin": "tcp"|"unixSocket"}`
/// (or nothing for the body `notify`), and remembers the origins it saw.
actor RecordingHandler: RPCRequestHandler {
    private(set) var origins: [RPCOrigin.Transport] = []

    nonisolated func respond(to body: ByteBuffer, from origin: RPCOrigin) async -> ByteBuffer? {
        await record(origin.transport)
        let text = String(buffer: body)
        if text == "notify" { return nil }
        let origin = origin.transport == .tcp ? "tcp" : "unixSocket"
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return ByteBuffer(string: #"{"echo":"\#(escaped)","origin":"\#(origin)"}"#)
    }

    private func record(_ transport: RPCOrigin.Transport) {
        origins.append(transport)
    }
}

/// What a running in-process daemon gives its test.
struct RunningDaemon: Sendable {
    let addresses: DaemonAddresses
    let context: DaemonContext
    let directory: TemporaryDirectory

    var socketTarget: ServerTestTarget { .unixSocket(addresses.socketPath) }
    var tcpTarget: ServerTestTarget { .tcp(port: addresses.tcpPort ?? 0) }

    /// The daemon's WebSocket registry, to count connections and broadcast.
    var registry: WebSocketRegistry { context.notifications as! WebSocketRegistry }
}

/// Runs a daemon in this process (socket in a fresh directory, TCP on a free loopback port,
/// no signal handling) with the handler `makeHandler` builds, calls `body` once it is ready,
/// then shuts it down and waits for it to stop.
@discardableResult
func withRunningDaemon<T: Sendable>(
    configure: @Sendable (inout DaemonConfiguration) -> Void = { _ in },
    makeHandler: @escaping @Sendable (DaemonContext) async throws -> any RPCRequestHandler = { _ in RecordingHandler() },
    _ body: @Sendable (RunningDaemon) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var configuration = DaemonConfiguration(
        socketPath: directory.path("run/haul.sock"),
        stateDirectory: URL(fileURLWithPath: directory.path("state")),
        tcp: .init(host: "127.0.0.1", port: 0),
        handlesTerminationSignals: false)
    configure(&configuration)
    let (contexts, contextContinuation) = AsyncStream.makeStream(of: DaemonContext.self)
    let (ready, readyContinuation) = AsyncStream.makeStream(of: DaemonAddresses.self)
    var logger = Logger(label: "haul.daemon.test")
    logger.logLevel = .warning
    let daemon = Daemon(configuration: configuration, logger: logger) { context in
        contextContinuation.yield(context)
        return DaemonComponents(handler: try await makeHandler(context))
    }
    let run = Task {
        defer { readyContinuation.finish() }
        try await daemon.run { addresses in readyContinuation.yield(addresses) }
    }
    do {
        let addresses = try await withTimeLimit("the daemon to be ready", within: .seconds(30)) {
            var iterator = ready.makeAsyncIterator()
            guard let addresses = await iterator.next() else {
                // The daemon stopped before it was ready: its own error says why.
                try await run.value
                throw WaitFailure("a ready daemon (it stopped without an error)", .ended)
            }
            return addresses
        }
        var contextIterator = contexts.makeAsyncIterator()
        guard let context = await contextIterator.next() else { throw WaitFailure("the daemon's context", .ended) }
        let value = try await body(RunningDaemon(addresses: addresses, context: context, directory: directory))
        daemon.control.requestShutdown()
        try await withTimeLimit("the daemon to stop", within: .seconds(30)) { try await run.value }
        return value
    } catch {
        daemon.control.requestShutdown()
        _ = try? await withTimeLimit("the daemon to stop", within: .seconds(30)) { try await run.value }
        throw error
    }
}
