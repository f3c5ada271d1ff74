import Foundation
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// tinyproxy (the Debian package; `scripts/test` installs it when missing) on 127.0.0.1, for
/// downloads through a real HTTP proxy, with or without Basic credentials.
struct TinyProxy: Sendable {
    let port: Int
    private let directory: TemporaryDirectory
    private let process: ChildProcess
    private let termination: Task<Int32, Never>

    /// `http://[user:password@]127.0.0.1:PORT`.
    func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)"
    }

    /// The requests the proxy was asked, e.g. `CONNECT 127.0.0.1:8443 HTTP/1.1`.
    func requests() -> [String] {
        let log = (try? String(contentsOf: directory.file("tinyproxy.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): ", options: .backwards), line.contains("Request (file descriptor") else { return nil }
            return String(line[range.upperBound...])
        }
    }

    static func with<T>(credentials: (user: String, password: String)? = nil, _ body: (TinyProxy) async throws -> T) async throws -> T {
        let proxy = try await start(credentials: credentials)
        do {
            let result = try await body(proxy)
            await proxy.stop()
            return result
        } catch {
            await proxy.stop()
            throw error
        }
    }

    static func start(credentials: (user: String, password: String)?) async throws -> TinyProxy {
        guard let tinyproxy = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"]
            .first(where: FileManager.default.isExecutableFile(atPath:))
        else { throw HaulProcessError("tinyproxy is not installed; run scripts/test, which installs it") }
        let directory = try TemporaryDirectory()
        let port = try LoopbackPort.free()
        var config = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            LogFile "\(directory.path)/tinyproxy.log"
            LogLevel Connect
            MaxClients 50
            Allow 127.0.0.1

            """
        if let credentials { config += "BasicAuth \(credentials.user) \(credentials.password)\n" }
        let file = directory.file("tinyproxy.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        let process = try ChildProcess(executable: tinyproxy, arguments: ["-d", "-c", file.path])
        let proxy = TinyProxy(port: port, directory: directory, process: process, termination: process.terminationTask())
        do {
            try await waitUntil("tinyproxy to accept connections on port \(port)", within: .seconds(10)) { LoopbackPort.accepts(port) }
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
}
