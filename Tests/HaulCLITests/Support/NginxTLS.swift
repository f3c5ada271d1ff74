import Foundation
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private CA made with the openssl command, and nginx serving HTTPS with HTTP/2 on
/// 127.0.0.1 with a certificate from it: one port for anyone, one that requires a client
/// certificate from the same CA. `scripts/test` installs nginx and openssl when missing.
struct NginxTLS: Sendable {
    let directory: TemporaryDirectory
    /// Port of the server any client may use.
    let port: Int
    /// Port of the server that requires a client certificate signed by the CA.
    let clientCertificatePort: Int
    private let process: ChildProcess
    private let termination: Task<Int32, Never>

    var caFile: String { directory.file("ca.pem").path }
    var clientCertificateFile: String { directory.file("client.pem").path }
    var clientKeyFile: String { directory.file("client.key").path }
    /// A CA nobody trusts, for a certificate that must be refused.
    var otherCAFile: String { directory.file("other-ca.pem").path }

    func url(_ name: String, clientCertificate: Bool = false) -> String {
        "https://127.0.0.1:\(clientCertificate ? clientCertificatePort : port)/\(name)"
    }

    /// Puts `bytes` where nginx serves them as `name`.
    func serve(_ bytes: [UInt8], as name: String) throws {
        try Data(bytes).write(to: directory.file("www/\(name)"))
    }

    /// Lines of the access log: `URI PROTOCOL STATUS`, e.g. `/a.bin HTTP/2.0 200`.
    func accessLog() -> [String] {
        let text = (try? String(contentsOf: directory.file("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    static func start() async throws -> NginxTLS {
        guard let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw HaulProcessError("nginx is not installed; run scripts/test, which installs it")
        }
        let directory = try TemporaryDirectory()
        for sub in ["www", "tmp"] { _ = try directory.subdirectory(sub) }
        try await makeCertificates(in: directory.url)
        let (port, clientCertificatePort) = (try LoopbackPort.free(), try LoopbackPort.free())
        let path = directory.path
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events { worker_connections 64; }
            http {
                log_format brief '$uri $server_protocol $status';
                access_log \(path)/access.log brief;
                client_body_temp_path \(path)/tmp/body;
                proxy_temp_path \(path)/tmp/proxy;
                fastcgi_temp_path \(path)/tmp/fastcgi;
                uwsgi_temp_path \(path)/tmp/uwsgi;
                scgi_temp_path \(path)/tmp/scgi;
                ssl_certificate \(path)/server.pem;
                ssl_certificate_key \(path)/server.key;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    root \(path)/www;
                }
                server {
                    listen 127.0.0.1:\(clientCertificatePort) ssl http2;
                    ssl_client_certificate \(path)/ca.pem;
                    ssl_verify_client on;
                    root \(path)/www;
                }
            }
            """
        try config.write(to: directory.file("nginx.conf"), atomically: true, encoding: .utf8)
        let process = try ChildProcess(executable: nginx, arguments: ["-p", path, "-c", "\(path)/nginx.conf", "-e", "\(path)/error.log"])
        let termination = process.terminationTask()
        let server = NginxTLS(
            directory: directory, port: port, clientCertificatePort: clientCertificatePort, process: process, termination: termination)
        let exit = ExitStatusBox()
        Task { exit.set(await termination.value) }
        // Ready when both ports accept connections (or nginx exited: its error log says why).
        do {
            try await waitUntil("nginx to accept connections on ports \(port) and \(clientCertificatePort)", within: .seconds(10)) {
                if let status = exit.value {
                    let log = (try? String(contentsOf: directory.file("error.log"), encoding: .utf8)) ?? ""
                    throw HaulProcessError("nginx exited with \(status): \(log)")
                }
                return LoopbackPort.accepts(port) && LoopbackPort.accepts(clientCertificatePort)
            }
            return server
        } catch let error as WaitFailure {
            await server.stop()
            throw error
        } catch {
            directory.remove()  // nginx has exited
            throw error
        }
    }

    func stop() async {
        process.send(SIGTERM)
        _ = await termination.value
        directory.remove()
    }

    /// Runs `body` with a started server and always stops it.
    static func with<T>(_ body: (NginxTLS) async throws -> T) async throws -> T {
        let server = try await start()
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// nginx's exit status once it has exited, without waiting for it.
    private final class ExitStatusBox: @unchecked Sendable {
        private let lock = NSLock()
        private var status: Int32?
        func set(_ value: Int32) { lock.withLock { status = value } }
        var value: Int32? { lock.withLock { status } }
    }

    /// A CA, a server certificate for 127.0.0.1 and localhost, a client certificate, and an
    /// unrelated CA, with EC keys (fast to make).
    private static func makeCertificates(in directory: URL) async throws {
        let path = directory.path
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
            .write(toFile: "\(path)/server.ext", atomically: true, encoding: .utf8)
        try "extendedKeyUsage=clientAuth\n".write(toFile: "\(path)/client.ext", atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for ca in ["ca", "other-ca"] {
            try await openssl(["req", "-x509"] + key + [
                "-keyout", "\(path)/\(ca).key", "-out", "\(path)/\(ca).pem", "-days", "2", "-subj", "/CN=Haul test \(ca)",
            ], in: path)
        }
        for leaf in ["server", "client"] {
            try await openssl(["req"] + key + [
                "-keyout", "\(path)/\(leaf).key", "-out", "\(path)/\(leaf).csr", "-subj", "/CN=haul-test-\(leaf)",
            ], in: path)
            try await openssl([
                "x509", "-req", "-in", "\(path)/\(leaf).csr", "-CA", "\(path)/ca.pem", "-CAkey", "\(path)/ca.key",
                "-CAcreateserial", "-out", "\(path)/\(leaf).pem", "-days", "2", "-extfile", "\(path)/\(leaf).ext",
            ], in: path)
        }
    }

    private static func openssl(_ arguments: [String], in directory: String) async throws {
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw HaulProcessError("openssl is not installed; run scripts/test, which installs it")
        }
        let process = try ChildProcess(executable: openssl, arguments: arguments, directory: directory)
        let status = await process.terminationTask().value
        guard ChildProcess.exitCode(status) == 0 else {
            throw HaulProcessError("openssl \(arguments.joined(separator: " ")) failed with status \(status)")
        }
    }
}
