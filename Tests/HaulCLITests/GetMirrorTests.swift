import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get` with mirrors: several URLs of one file on one input line, separated by tabs.
@Suite(.timeLimit(.minutes(2))) struct GetMirrorTests {
    /// A file listed with two mirrors, one throttled and one dropping every connection mid-body, arrives exact (its sha256 checked), and both servers served ranges of it.
    @Test func tabSeparatedMirrorsShareTheDownload() async throws {
        try await withTestServer { slow in
            try await withTestServer { dropping in
                try await withTemporaryDirectory { directory in
                    let size = 1 << 20
                    let bytes = Checksums.content(seed: 41, size: size)
                    let query = ["size": "\(size)", "seed": "41"]
                    let primary = slow.url("/file/m.bin", query.merging(["rate": "\(512 << 10)"]) { $1 })
                    let mirror = dropping.url("/file/m.bin", query.merging(["drop": "\(96 << 10)"]) { $1 })
                    try directory.write("""
                        \(primary)\t\(mirror)
                          out=m.bin
                          checksum=sha-256=\(Checksums.sha256(bytes))
                        """, to: "list.txt")

                    let result = try await HaulProcess.run(
                        ["get", "-i", "list.txt", "-s", "4", "-x", "2", "--min-split-size", "64K", "--retry-wait", "0.05", "-q"],
                        in: directory.url)

                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(directory.contents(of: "m.bin") == bytes)
                    #expect(directory.haulLeftovers().isEmpty)
                    let fromMirror = dropping.requests(forKey: "/file/m.bin")
                    #expect(fromMirror.filter { $0.status == 206 }.count >= 2, "the mirror served ranges, asked again after each drop")
                    #expect(slow.bytesSent(forKey: "/file/m.bin") > 0)
                }
            }
        }
    }
}
