import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// nginx serving a directory over plain HTTP on 127.0.0.1, for tests that need a real web
/// server (HLS made by ffmpeg, Metalink mirrors, aria2c against the same files): `www/` is the
/// root, HLS and Metalink files get their registered content types, `/slow/` serves the same
/// root at `slowRate` bytes per second until `lift()` (so a test can kill a client part way
/// however slow the machine, then let the rerun go at full speed), and the access log records
/// each request's URI, status and body bytes. `scripts/test` installs nginx when missing.
public struct NginxStatic: Sendable {
    private let temporary: TemporaryDirectory
    public let port: Int
    private let process: ChildProcess
    private let termination: Task<Int32, Never>

    /// Its configuration, logs and `www/`.
    public var directory: URL { temporary.url }
    /// The served root.
    public var root: URL { directory.appendingPathComponent("www", isDirectory: true) }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Access log lines as `(uri, status, bytes)`, in order.
    public func accessLog() -> [(uri: String, status: Int, bytes: Int)] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let status = Int(fields[1]), let bytes = Int(fields[2]) else { return nil }
            return (String(fields[0]), status, bytes)
        }
    }

    /// Makes `/slow/` unthrottled from the next request on: nginx checks for this file on each
    /// request (the flag lives beside the configuration, outside the served root).
    public func lift() throws {
        try Data().write(to: directory.appendingPathComponent("lifted"))
    }

    /// Starts nginx; `slowRate` is the per-request rate of `/slow/` (nginx `limit_rate`) until
    /// `lift()`.
    public static func start(slowRate: String = "16k") async throws -> NginxStatic {
        guard let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw NginxError("nginx is not installed; run scripts/test, which installs it")
        }
        let temporary = try TemporaryDirectory()
        let directory = temporary.url
        for sub in ["www", "tmp"] { _ = try temporary.subdirectory(sub) }
        let port = try LoopbackPort.free()
        let path = directory.path
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events { worker_connections 256; }
            http {
                types {
                    application/vnd.apple.mpegurl m3u8;
                    video/mp2t ts;
                    video/mp4 mp4 m4s;
                    application/metalink4+xml meta4;
                    application/octet-stream bin key;
                }
                default_type application/octet-stream;
                log_format brief '$uri $status $body_bytes_sent';
                access_log \(path)/access.log brief;
                client_body_temp_path \(path)/tmp/body;
                proxy_temp_path \(path)/tmp/proxy;
                fastcgi_temp_path \(path)/tmp/fastcgi;
                uwsgi_temp_path \(path)/tmp/uwsgi;
                scgi_temp_path \(path)/tmp/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    root \(path)/www;
                    location /slow/ {
                        alias \(path)/www/;
                        set $slow_rate \(slowRate);
                        if (-f \(path)/lifted) {
                            set $slow_rate 0;
                        }
                        limit_rate $slow_rate;
                    }
                    location /typed/ {
                        alias \(path)/www/;
                        default_type application/x-mpegURL;
                    }
                }
            }
            """
        try config.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let process = try ChildProcess(executable: nginx, arguments: ["-p", path, "-c", "\(path)/nginx.conf", "-e", "\(path)/error.log"])
        let termination = process.terminationTask()
        let server = NginxStatic(temporary: temporary, port: port, process: process, termination: termination)
        do {
            try await waitUntil("nginx to accept connections on port \(port)", within: .seconds(10)) { LoopbackPort.accepts(port) }
            return server
        } catch {
            await server.stop()
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            server.remove()
            throw NginxError("\(error): \(log)")
        }
    }

    /// Starts nginx, runs `body` with it, then stops it and removes its files, however `body`
    /// ends. A server only removed (`defer { remove() }`) kept running after its test, and
    /// after the test process: three per full run were left on this machine.
    public static func serving<T>(slowRate: String = "16k", _ body: (NginxStatic) async throws -> T) async throws -> T {
        let server = try await start(slowRate: slowRate)
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body(server))
        } catch {
            outcome = .failure(error)
        }
        await server.stop()
        server.remove()
        return try outcome.get()
    }

    /// Stops nginx (the files stay until `remove`).
    public func stop() async {
        process.send(SIGTERM)
        _ = await termination.value
    }

    public func remove() {
        temporary.remove()
    }
}

public struct NginxError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
