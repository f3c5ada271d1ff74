import Foundation
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// microsocks (the Debian package; `scripts/test` installs it when missing) on 127.0.0.1: a real
/// SOCKS5 server, with or without a user name and password. It logs every connection it makes
/// for a client (`client[5] 127.0.0.1: connected to localhost:8080`) before it relays a byte,
/// so a download that arrived through it is always in the log.
struct MicroSocks: Sendable {
    let port: Int
    private let directory: TemporaryDirectory
    private let process: ChildProcess
    private let termination: Task<Int32, Never>

    /// `SCHEME://[user:password@]127.0.0.1:PORT`.
    func url(scheme: String = "socks5h", user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "\(scheme)://\(credentials)127.0.0.1:\(port)"
    }

    /// The destinations the proxy connected to for its clients, as it names them: the host
    /// name the client sent (`localhost:8080`) or the address.
    func connections() -> [String] {
        let log = (try? String(contentsOf: directory.file("microsocks.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: ": connected to ") else { return nil }
            return String(line[range.upperBound...])
        }
    }

    static func with<T>(port: Int? = nil, credentials: (user: String, password: String)? = nil, _ body: (MicroSocks) async throws -> T) async throws -> T {
        let proxy = try await start(port: port, credentials: credentials)
        do {
            let result = try await body(proxy)
            await proxy.stop()
            return result
        } catch {
            await proxy.stop()
            throw error
        }
    }

    /// Starts microsocks on `port` (a free one when nil) and returns once it accepts connections.
    static func start(port: Int? = nil, credentials: (user: String, password: String)? = nil) async throws -> MicroSocks {
        guard let microsocks = ["/usr/bin/microsocks", "/usr/local/bin/microsocks"].first(where: FileManager.default.isExecutableFile(atPath:))
        else { throw HaulProcessError("microsocks is not installed; run scripts/test, which installs it") }
        let directory = try TemporaryDirectory()
        let port = try port ?? LoopbackPort.free()
        var arguments = ["-i", "127.0.0.1", "-p", "\(port)"]
        if let credentials { arguments += ["-u", credentials.user, "-P", credentials.password] }
        // Its log goes to standard output; a file keeps it readable at any time (the shell
        // execs microsocks, so the signal in `stop` reaches it).
        let log = directory.file("microsocks.log").path
        let command = "exec " + ([microsocks] + arguments).map(shellQuoted).joined(separator: " ") + " >" + shellQuoted(log) + " 2>&1"
        let process = try ChildProcess(executable: "/bin/sh", arguments: ["-c", command])
        let proxy = MicroSocks(port: port, directory: directory, process: process, termination: process.terminationTask())
        do {
            try await waitUntil("microsocks to accept connections on port \(port)", within: .seconds(10)) { LoopbackPort.accepts(port) }
            return proxy
        } catch {
            await proxy.stop()
            throw error
        }
    }

    func stop() async {
        process.send(SIGTERM)
        _ = await termination.value
        directory.remove()
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
