import Foundation
import Haul
@testable import HaulDaemon
import HaulTestSupport
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// How a daemon stops: on request, in order, and also when it cannot start listening.
@Suite(.timeLimit(.minutes(3))) struct DaemonShutdownTests {
    /// Records the order of shutdown steps.
    actor Journal {
        private(set) var entries: [String] = []
        func note(_ entry: String) { entries.append(entry) }
    }

    /// A service standing in for the session host: notes when it stops.
    struct HostService: Service {
        let journal: Journal
        func run() async throws {
            try? await gracefulShutdown()
            await journal.note("host stopped")
        }
    }

    private static func quietLogger() -> Logger {
        var logger = Logger(label: "haul.daemon.test")
        logger.logLevel = .critical
        return logger
    }

    /// The RPC layer's shutdown request (here the echo handler's `aria2.shutdown`) is answered,
    /// then the servers stop, then the host's services, then the shutdown hook runs, and the
    /// socket is removed.
    @Test func requestedShutdownStopsInOrder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = Journal()
        let socketPath = directory.path("haul.sock")
        let daemon = Daemon(
            configuration: DaemonConfiguration(
                socketPath: socketPath, stateDirectory: URL(fileURLWithPath: directory.path("state")),
                tcp: .init(port: 0), handlesTerminationSignals: false),
            logger: Self.quietLogger()
        ) { context in
            DaemonComponents(
                handler: EchoRPCHandler(control: context.control),
                services: [HostService(journal: journal)],
                onShutdown: {
                    // The listeners are gone by now: nothing reaches a stopped session.
                    let reachable: Bool
                    do {
                        let _: [String] = try await withRPCClient(endpoint: .unixSocket(path: socketPath)) { client in
                            try await client.call("test.echo")
                        }
                        reachable = true
                    } catch {
                        reachable = (error as? HaulError)?.code != .daemonUnavailable
                    }
                    await journal.note(reachable ? "hook (still listening)" : "hook")
                })
        }
        let (ready, readyContinuation) = AsyncStream.makeStream(of: DaemonAddresses.self)
        let run = Task { try await daemon.run { readyContinuation.yield($0) } }
        let addresses = try await withTimeLimit("the daemon to be ready") {
            var iterator = ready.makeAsyncIterator()
            return try #require(await iterator.next())
        }
        let answer: String = try await withRPCClient(endpoint: addresses.socketEndpoint) { client in
            try await client.call("aria2.shutdown")
        }
        #expect(answer == "OK")
        try await withTimeLimit("the daemon to stop") { try await run.value }
        let entries = await journal.entries
        #expect(entries == ["host stopped", "hook"])
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    /// When a listener cannot bind (the TCP port is taken), the daemon fails with
    /// `.cannotListen` naming the address, and the shutdown hook still runs.
    @Test func bindFailureRunsTheHook() async throws {
        try await withRunningDaemon { first in
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let journal = Journal()
            let port = try #require(first.addresses.tcpPort)
            let second = Daemon(
                configuration: DaemonConfiguration(
                    socketPath: directory.path("haul.sock"), stateDirectory: URL(fileURLWithPath: directory.path("state")),
                    tcp: .init(port: port), handlesTerminationSignals: false),
                logger: Self.quietLogger(),
                makeHandler: { _ in RecordingHandler() },
                onShutdown: { await journal.note("hook") })
            await #expect {
                try await second.run()
            } throws: { error in
                (error as? DaemonError)?.kind == .cannotListen && "\(error)".contains("127.0.0.1:\(port)")
            }
            #expect(await journal.entries == ["hook"])
            #expect(!FileManager.default.fileExists(atPath: directory.path("haul.sock")))
        }
    }

    /// Open WebSocket clients are closed normally (1000) when the daemon shuts down.
    @Test func shutdownClosesWebSockets() async throws {
        let socket = try await withRunningDaemon { daemon in
            let socket = try await ServerTestWebSocket.connect(daemon.tcpTarget)
            try await waitUntil("the client to be registered") { await daemon.registry.count == 1 }
            return socket
        }
        #expect(try await socket.closed() == .normalClosure)
    }
}
