import Crypto
import Foundation
import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The done-when for mirrors: a real `haul daemon` process, driven over TCP with its
/// secret, downloads one file from two mirrors given to `aria2.addUri`: one throttled, one that
/// drops every connection mid-body.
@Suite(.timeLimit(.minutes(2))) struct DaemonMirrorTests {
    static let secret = "mirror-test-secret"

    /// The file arrives exact (its sha256 checked by the daemon and here), and the request logs of both servers show ranges they served: the mirror was used, and asked again after each drop.
    @Test func twoMirrorsOneThrottledOneDropping() async throws {
        try await withTestServer { slow in
            try await withTestServer { dropping in
                let directory = try TemporaryDirectory()
                defer { directory.remove() }
                try FileManager.default.createDirectory(atPath: directory.path("out"), withIntermediateDirectories: true)
                let daemon = try DaemonTestProcess([
                    "--socket", directory.path("run/haul.sock"), "--state-dir", directory.path("state"),
                    "--rpc-listen-port", "0", "--rpc-secret", Self.secret, "--dir", directory.path("out"),
                    "--min-split-size", "64K", "--retry-wait", "0.05",
                ])
                let (fields, lines) = try await daemon.waitForReady()
                let port = try #require(fields["tcp"].flatMap { Int($0.split(separator: ":").last ?? "") }, "not ready: \(lines)")

                let size = 1 << 20
                let bytes = TestContent.bytes(seed: 71, size: size)
                let sha = SHA256.hash(data: Data(bytes)).map { String(format: "%02x", $0) }.joined()
                let query = ["size": "\(size)", "seed": "71"]
                let primary = slow.url("/file/m.bin", query.merging(["rate": "\(512 << 10)"]) { $1 })
                let mirror = dropping.url("/file/m.bin", query.merging(["drop": "\(96 << 10)"]) { $1 })

                try await withRPCClient(endpoint: .tcp(port: port), secret: Self.secret) { client in
                    let gid = try await client.call(
                        "aria2.addUri", [primary, mirror],
                        ["split": "4", "max-connection-per-server": "2", "checksum": "sha-256=\(sha)", "out": "m.bin"],
                        returning: String.self)
                    let status = try await waitForValue("the download to end", within: .seconds(60)) { () async throws -> String? in
                        let status = try await client.call("aria2.tellStatus", gid, ["status"], returning: [String: String].self)["status"] ?? ""
                        return status != "active" && status != "waiting" ? status : nil
                    }
                    #expect(status == "complete")
                    let uris = try await client.call("aria2.getUris", gid, returning: [[String: String]].self)
                    #expect(uris.map { $0["uri"] } == [primary, mirror])
                }
                #expect(FileManager.default.contents(atPath: directory.path("out/m.bin")) == Data(bytes))
                let fromMirror = dropping.requests(forKey: "/file/m.bin")
                #expect(fromMirror.filter { $0.status == 206 }.count >= 2, "the mirror served ranges, asked again after its drops: \(fromMirror.map(\.status))")
                #expect(dropping.bytesSent(forKey: "/file/m.bin") > 0 && slow.bytesSent(forKey: "/file/m.bin") > 0)

                daemon.send(SIGTERM)
                #expect(try await daemon.exit().code == 0)
            }
        }
    }
}
