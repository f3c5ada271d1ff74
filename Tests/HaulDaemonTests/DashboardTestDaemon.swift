import AsyncHTTPClient
import Foundation
import HaulTestSupport
import NIOCore
import NIOHTTP1
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `haul daemon` process for the dashboard's tests: a socket, a TCP port and a download
/// directory of its own, and the secret below. Plain HTTP helpers reach it on either listener.
struct DashboardTestDaemon: Sendable {
    static let secret = "dashboard-test-secret"

    let process: DaemonTestProcess
    let directory: TemporaryDirectory
    let port: Int

    var socket: String { directory.path("run/haul.sock") }
    var downloads: String { directory.path("downloads") }

    /// Starts one; `extraArguments` are added to `haul daemon`'s (e.g. `--rpc-allow-origin-all`).
    static func start(extraArguments: [String] = []) async throws -> DashboardTestDaemon {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("downloads"), withIntermediateDirectories: true)
        let process = try DaemonTestProcess([
            "--socket", directory.path("run/haul.sock"), "--state-dir", directory.path("state"),
            "--dir", directory.path("downloads"), "--rpc-listen-port", "0", "--rpc-secret", secret,
        ] + extraArguments, timeout: .seconds(300))
        let (fields, lines) = try await process.waitForReady()
        guard let port = fields["tcp"].flatMap({ Int($0.split(separator: ":").last ?? "") }) else {
            process.send(SIGKILL)
            directory.remove()
            Issue.record("the daemon did not get ready; it printed: \(lines)")
            throw WaitFailure("a ready daemon", .ended)
        }
        return DashboardTestDaemon(process: process, directory: directory, port: port)
    }

    /// SIGTERM, a clean exit, and the directory removed.
    func stop() async throws {
        process.send(SIGTERM)
        let exit = try await process.exit()
        #expect(exit.code == 0, "the daemon exited with \(exit)")
        directory.remove()
    }

    func url(_ path: String, overSocket: Bool = false) -> String {
        overSocket ? URL(httpURLWithSocketPath: socket, uri: path)!.absoluteString : "http://127.0.0.1:\(port)\(path)"
    }

    /// GET `path`: the status, the headers and the body as text.
    func get(_ path: String, overSocket: Bool = false) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        try await withHTTPClient { client in
            let response = try await client.execute(HTTPClientRequest(url: url(path, overSocket: overSocket)), timeout: .seconds(20))
            let body = try await response.body.collect(upTo: 4 << 20)
            return (Int(response.status.code), response.headers, String(buffer: body))
        }
    }

    /// One JSON-RPC call over TCP (with the secret unless `secret` is nil); the whole answer.
    func call(_ method: String, _ parameters: [Any], secret: String? = DashboardTestDaemon.secret) async throws -> [String: Any] {
        let params: [Any] = (secret.map { ["token:" + $0] } ?? []) + parameters
        let body = try JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "id": "1", "method": method, "params": params])
        let data = try await withHTTPClient { client in
            var request = HTTPClientRequest(url: url("/jsonrpc"))
            request.method = .POST
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await client.execute(request, timeout: .seconds(20))
            return Data(buffer: try await response.body.collect(upTo: 4 << 20))
        }
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

}
