import Foundation
import Haul
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real `haul daemon` child process for the client command tests, in a directory of its own
/// (socket, state, download directory), and a way to run `haul` commands against it.
final class ClientCommandDaemon: Sendable {
    let directory: TemporaryDirectory
    var root: URL { directory.url }
    let socket: String
    let state: URL
    let downloads: URL
    /// `host:port` of its TCP endpoint, when started with TCP.
    let tcpAddress: String?
    private let process: LineProcess

    private init(directory: TemporaryDirectory, socket: String, state: URL, downloads: URL, tcpAddress: String?, process: LineProcess) {
        self.directory = directory
        self.socket = socket
        self.state = state
        self.downloads = downloads
        self.tcpAddress = tcpAddress
        self.process = process
    }

    /// Starts a daemon and waits for its ready line. With `tcpSecret`, it also listens on a
    /// free loopback port with that secret; otherwise on the socket only.
    static func start(tcpSecret: String? = nil) async throws -> ClientCommandDaemon {
        let haul = try #require(LineProcess.builtProduct("haul"), "build the haul product first")
        let directory = try TemporaryDirectory()
        let state = directory.file("state")
        let downloads = try directory.subdirectory("out")
        let socket = directory.path("d.sock")
        var arguments = ["daemon", "--socket", socket, "--state-dir", state.path, "--dir", downloads.path]
        if let tcpSecret {
            arguments += ["--rpc-listen-port", "0", "--rpc-secret", tcpSecret]
        } else {
            arguments.append("--no-tcp")
        }
        let process = try LineProcess(executable: haul, arguments: arguments, timeout: .seconds(240))
        let ready: String
        do {
            ready = try await firstElement(of: process.errors, "the daemon's ready line", within: .seconds(120)) { $0.hasPrefix("haul daemon: ready") }
        } catch {
            process.send(SIGKILL)
            directory.remove()
            throw error
        }
        let tcp = ready.split(separator: " ").first { $0.hasPrefix("tcp=") }.map { String($0.dropFirst(4)) }
        return ClientCommandDaemon(
            directory: directory, socket: socket, state: state, downloads: downloads,
            tcpAddress: tcp == "off" ? nil : tcp, process: process)
    }

    /// Stops the daemon (SIGTERM, a graceful stop) and removes its directory.
    func stop() async {
        process.send(SIGTERM)
        let status = await process.waitForExit()
        #expect(ChildProcess.exitCode(status) == 0, "the daemon stopped cleanly")
        directory.remove()
    }

    /// `haul ARGUMENTS --socket SOCKET`, run to the end.
    func haul(_ arguments: [String], inTerminal: Bool = false) async throws -> HaulProcess.Result {
        try await HaulProcess.run(arguments + ["--socket", socket], in: root, inTerminal: inTerminal)
    }

    /// `haul ARGUMENTS --socket SOCKET`, started: for the tests that signal it.
    func start(_ arguments: [String], inTerminal: Bool = false) throws -> HaulProcess {
        try HaulProcess(arguments + ["--socket", socket], in: root, inTerminal: inTerminal)
    }

    /// `haul status GID --json`, decoded.
    func status(_ gid: String) async throws -> ClientStatusJSON {
        let result = try await haul(["status", gid, "--json"])
        #expect(result.status == 0, "haul status: \(result.stderr)")
        return try JSONDecoder().decode(ClientStatusJSON.self, from: Data(result.stdout.utf8))
    }

    /// Runs `haul status` until `condition` holds on what it prints, and returns that; fails
    /// with the last status after `limit`.
    @discardableResult
    func waitForStatus(
        _ gid: String, within limit: Duration = .seconds(60), _ what: String,
        until condition: (ClientStatusJSON) -> Bool
    ) async throws -> ClientStatusJSON {
        var last: ClientStatusJSON?
        return try await waitForValue("\(gid) to become \(what)", within: limit, explaining: { "last: \(last.map(String.init(describing:)) ?? "none")" }) {
            let status = try await status(gid)
            last = status
            return condition(status) ? status : nil
        }
    }
}

/// Runs `body` with a started daemon and always stops it.
func withClientDaemon<T>(
    tcpSecret: String? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (ClientCommandDaemon) async throws -> T
) async throws -> T {
    let daemon = try await ClientCommandDaemon.start(tcpSecret: tcpSecret)
    do {
        let value = try await body(daemon)
        await daemon.stop()
        return value
    } catch {
        await daemon.stop()
        throw error
    }
}

/// One download as `haul status --json` and `haul ls --json` print it.
struct ClientStatusJSON: Decodable, Sendable, CustomStringConvertible {
    let gid: String
    let state: String
    let name: String
    let path: String?
    let url: String?
    let completedBytes: Int64
    let totalBytes: Int64?
    let fraction: Double?
    let bytesPerSecond: Int64
    let errorCode: Int?
    let errorMessage: String?

    var description: String { "\(state) \(completedBytes)/\(totalBytes.map(String.init) ?? "?") \(errorMessage ?? "")" }
}
