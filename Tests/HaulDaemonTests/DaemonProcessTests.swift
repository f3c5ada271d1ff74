import Foundation
import Haul
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul daemon` as a real process: the ready line, the locks against a second daemon, signals,
/// and recovery after `kill -9`.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DaemonProcessTests {
    /// The secret the test daemons are started with: TCP calls need it.
    static let secret = "process-test-secret"

    /// The arguments of a daemon in `directory`, on a free TCP port.
    private static func arguments(_ directory: TemporaryDirectory, socket: String = "run/haul.sock", state: String = "state", port: Int = 0) -> [String] {
        ["--socket", directory.path(socket), "--state-dir", directory.path(state), "--rpc-listen-port", String(port),
         "--rpc-secret", secret]
    }

    /// Starts a daemon and waits for its ready line; returns it and the line's fields.
    private static func startReady(_ arguments: [String]) async throws -> (DaemonTestProcess, [String: String]) {
        let process = try DaemonTestProcess(arguments)
        let (fields, lines) = try await process.waitForReady()
        guard !fields.isEmpty else {
            process.send(SIGKILL)
            Issue.record("the daemon did not get ready; it printed: \(lines)")
            throw WaitFailure("a ready daemon", .ended)
        }
        return (process, fields)
    }

    /// Makes one JSON-RPC call to the daemon at `endpoint`, failing unless it answers (any
    /// result will do: these tests are about the process, whichever handler it plugs in).
    private static func probe(_ endpoint: DaemonEndpoint) async throws {
        try await withRPCClient(endpoint: endpoint, secret: endpoint.requiresSecret ? secret : nil) { client in
            _ = try await client.call("aria2.getVersion", returning: AnyJSON.self)
        }
    }

    private static func probe(socket: String) async throws {
        try await probe(.unixSocket(path: socket))
    }

    /// The ready line names the socket, the TCP address actually bound and the PID; the daemon
    /// answers on both; SIGTERM stops it with status 0 and removes its socket.
    @Test func readyThenSigtermStopsCleanly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (daemon, fields) = try await Self.startReady(Self.arguments(directory))
        let socket = directory.path("run/haul.sock")
        #expect(fields["socket"] == socket)
        #expect(fields["pid"] == String(daemon.child.pid))
        let tcp = try #require(fields["tcp"])
        #expect(tcp.hasPrefix("127.0.0.1:"))
        let port = try #require(Int(tcp.split(separator: ":").last ?? ""))
        #expect(port > 0)
        try await Self.probe(socket: socket)
        try await Self.probe(.tcp(port: port))

        daemon.send(SIGTERM)
        let exit = try await daemon.exit()
        #expect(exit.code == 0 && exit.signal == nil)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    /// With --no-tcp the daemon listens on its socket alone; SIGINT stops it as gracefully as
    /// SIGTERM.
    @Test func socketOnlyDaemonStopsOnSigint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (daemon, fields) = try await Self.startReady(
            ["--socket", directory.path("run/haul.sock"), "--state-dir", directory.path("state"), "--no-tcp"])
        #expect(fields["tcp"] == "off")
        try await Self.probe(socket: directory.path("run/haul.sock"))
        daemon.send(SIGINT)
        let exit = try await daemon.exit()
        #expect(exit.code == 0 && exit.signal == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path("run/haul.sock")))
    }

    /// A second daemon on the same state directory exits with 10 and names the first one's
    /// PID; the first keeps serving.
    @Test func secondDaemonOnStateDirectoryExits10() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (first, _) = try await Self.startReady(Self.arguments(directory))
        let second = try DaemonTestProcess(Self.arguments(directory, socket: "other.sock"))
        let lines = try await second.remainingLines()
        #expect(try await second.exit().code == 10)
        #expect(lines.contains { $0.contains("PID \(first.child.pid)") && $0.contains(directory.path("state")) }, "\(lines)")
        try await Self.probe(socket: directory.path("run/haul.sock"))
        first.send(SIGTERM)
        #expect(try await first.exit().code == 0)
    }

    /// A second daemon on the same socket exits with 10 and names the first one's PID.
    @Test func secondDaemonOnSocketExits10() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (first, _) = try await Self.startReady(Self.arguments(directory))
        let second = try DaemonTestProcess(Self.arguments(directory, state: "other-state"))
        let lines = try await second.remainingLines()
        #expect(try await second.exit().code == 10)
        #expect(lines.contains { $0.contains("PID \(first.child.pid)") && $0.contains("haul.sock") }, "\(lines)")
        try await Self.probe(socket: directory.path("run/haul.sock"))
        first.send(SIGTERM)
        #expect(try await first.exit().code == 0)
    }

    /// A daemon whose TCP port is taken exits with 11 and says which address.
    @Test func takenPortExits11() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (first, fields) = try await Self.startReady(Self.arguments(directory))
        let port = try #require(fields["tcp"].flatMap { Int($0.split(separator: ":").last ?? "") })
        let second = try DaemonTestProcess(Self.arguments(directory, socket: "b.sock", state: "b-state", port: port))
        let lines = try await second.remainingLines()
        #expect(try await second.exit().code == 11)
        #expect(lines.contains { $0.contains("127.0.0.1:\(port)") }, "\(lines)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("b.sock")))
        first.send(SIGTERM)
        #expect(try await first.exit().code == 0)
    }

    /// After `kill -9` the socket is left behind but its lock is free: the next daemon removes
    /// the stale socket, starts, and serves.
    @Test func staleSocketAfterKillIsRecovered() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socket = directory.path("run/haul.sock")
        let (crashed, _) = try await Self.startReady(Self.arguments(directory))
        crashed.send(SIGKILL)
        #expect(try await crashed.exit().signal == SIGKILL)
        #expect(FileManager.default.fileExists(atPath: socket))
        await #expect {
            try await Self.probe(socket: socket)
        } throws: { error in
            (error as? HaulError)?.code == .daemonUnavailable
        }

        let next = try DaemonTestProcess(Self.arguments(directory))
        let (fields, lines) = try await next.waitForReady()
        #expect(fields["socket"] == socket)
        #expect(lines.contains { $0.contains("removed a stale socket") }, "\(lines)")
        try await Self.probe(socket: socket)
        next.send(SIGTERM)
        #expect(try await next.exit().code == 0)
    }

    /// `--allow-dir` reaches the `haul.*` methods: over TCP a download may go into `--dir` or an
    /// allowed directory and not elsewhere; over the socket, elsewhere too. An allowed
    /// directory that does not exist stops the daemon with status 3.
    @Test func allowedDirectoriesOverTCP() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for name in ["downloads", "allowed", "outside"] {
            try FileManager.default.createDirectory(atPath: directory.path(name), withIntermediateDirectories: true)
        }
        let (daemon, fields) = try await Self.startReady(Self.arguments(directory) + [
            "--dir", directory.path("downloads"), "--allow-dir", directory.path("allowed"),
        ])
        let tcp = try #require(fields["tcp"])
        let port = try #require(Int(tcp.split(separator: ":").last ?? ""))
        func request(_ name: String) -> DownloadRequest {
            // Port 9 refuses: the download fails soon, which does not matter here.
            DownloadRequest(url: URL(string: "http://127.0.0.1:9/f.bin")!, directory: URL(fileURLWithPath: directory.path(name)))
        }
        try await withRPCClient(endpoint: .tcp(port: port), secret: Self.secret) { client in
            _ = try await client.call("haul.add", "app", request("downloads"), returning: String.self)
            _ = try await client.call("haul.add", "app", request("allowed"), returning: String.self)
            await #expect {
                _ = try await client.call("haul.add", "app", request("outside"), returning: String.self)
            } throws: { error in
                "\(error)".contains("outside the directories")
            }
        }
        try await withRPCClient(endpoint: .unixSocket(path: directory.path("run/haul.sock"))) { client in
            _ = try await client.call("haul.add", "app", request("outside"), returning: String.self)
        }
        daemon.send(SIGTERM)
        #expect(try await daemon.exit().code == 0)

        let missing = try DaemonTestProcess(Self.arguments(directory) + ["--allow-dir", directory.path("missing")])
        let lines = try await missing.remainingLines()
        #expect(try await missing.exit().code == 3)
        #expect(lines.contains { $0.contains("--allow-dir") && $0.contains("missing") }, "\(lines)")
    }

    /// Contradictory options are a usage error (2).
    @Test func contradictoryOptionsAreUsageErrors() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let process = try DaemonTestProcess(Self.arguments(directory) + ["--no-tcp"])
        let lines = try await process.remainingLines()
        #expect(try await process.exit().code == 2)
        #expect(lines.contains { $0.contains("--no-tcp") }, "\(lines)")
    }
}

/// Any JSON value, read and dropped.
struct AnyJSON: Decodable {
    init(from decoder: any Decoder) throws {}
}
