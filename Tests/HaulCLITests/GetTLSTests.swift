import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `haul get` against nginx with TLS and HTTP/2 on 127.0.0.1, with a CA made by the test:
/// a private CA trusted with `--ca-certificate`, an untrusted one refused with exit 14 and a
/// clear message, `--check-certificate=false` with its warning, and a client certificate.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GetTLSTests {
    /// With the private CA trusted, the file arrives whole, over HTTP/2.
    @Test func privateCAOverHTTP2() async throws {
        try await NginxTLS.with { nginx in
            try await withTemporaryDirectory { directory in
                let content = Checksums.content(seed: 11, size: 300_000)
                try nginx.serve(content, as: "a.bin")
                let result = try await HaulProcess.run([
                    "get", "--ca-certificate", nginx.caFile, "--checksum", "sha256=\(Checksums.sha256(content))", nginx.url("a.bin"),
                ], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "a.bin") == content)
                #expect(nginx.accessLog().contains("/a.bin HTTP/2.0 200"), "\(nginx.accessLog())")
            }
        }
    }

    /// Files of more than a default HTTP/2 stream window (65,535 bytes), 16 at once on one
    /// connection whose streams start with a wide window (`HTTPTransport.widenStreamWindows`),
    /// all arrive whole.
    @Test func manyFilesAtOnceOverHTTP2() async throws {
        try await NginxTLS.with { nginx in
            try await withTemporaryDirectory { directory in
                let contents = (0..<24).map { Checksums.content(seed: UInt64(40 + $0), size: 65_536 + 9_973 * $0) }
                for (index, content) in contents.enumerated() { try nginx.serve(content, as: "w\(index).bin") }
                let result = try await HaulProcess.run(
                    ["get", "-j", "16", "--ca-certificate", nginx.caFile] + contents.indices.map { nginx.url("w\($0).bin") },
                    in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                for (index, content) in contents.enumerated() {
                    #expect(directory.contents(of: "w\(index).bin") == content, "w\(index).bin")
                }
                #expect(nginx.accessLog().filter { $0.contains("HTTP/2.0 200") }.count == contents.count, "\(nginx.accessLog())")
            }
        }
    }

    /// A certificate from a CA nobody trusted fails at once (no retries) with exit 14 and a
    /// message that says what to do; nothing is placed.
    @Test func untrustedCertificateExits14() async throws {
        try await NginxTLS.with { nginx in
            try await withTemporaryDirectory { directory in
                try nginx.serve(Checksums.content(seed: 1, size: 1000), as: "b.bin")
                for extra in [[], ["--ca-certificate", nginx.otherCAFile]] {
                    let result = try await HaulProcess.run(["get", "--json"] + extra + [nginx.url("b.bin")], in: directory.url)
                    #expect(result.status == 14, "stderr: \(result.stderr)")
                    let events = try JSONEventLine.decodeAll(result.stdoutLines)
                    #expect(!events.contains { $0.event == "retrying" })
                    let failed = try #require(events.first { $0.event == "failed" })
                    #expect(failed.error?.code == "certificate")
                    #expect(failed.error?.message.contains("not trusted") == true, "\(failed.error?.message ?? "")")
                    #expect(failed.error?.message.contains("--ca-certificate") == true)
                    #expect(directory.names().filter { !$0.hasPrefix(".haul-") }.isEmpty)
                }
                #expect(nginx.accessLog().isEmpty)
            }
        }
    }

    /// `--check-certificate=false` downloads from the untrusted server, warning on stderr.
    @Test func checkCertificateFalseWarns() async throws {
        try await NginxTLS.with { nginx in
            try await withTemporaryDirectory { directory in
                let content = Checksums.content(seed: 2, size: 5000)
                try nginx.serve(content, as: "c.bin")
                let result = try await HaulProcess.run(["get", "--check-certificate=false", nginx.url("c.bin")], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("WARNING"))
                #expect(result.stderr.contains("NOT checked"))
                #expect(directory.contents(of: "c.bin") == content)
            }
        }
    }

    /// A server that requires a client certificate gets one with `--certificate`/`--private-key`;
    /// without them nginx refuses the request.
    @Test func clientCertificate() async throws {
        try await NginxTLS.with { nginx in
            try await withTemporaryDirectory { directory in
                let content = Checksums.content(seed: 3, size: 20_000)
                try nginx.serve(content, as: "d.bin")
                let url = nginx.url("d.bin", clientCertificate: true)
                let refused = try await HaulProcess.run(["get", "--ca-certificate", nginx.caFile, url], in: directory.url)
                #expect(refused.status != 0)
                #expect(!FileManager.default.fileExists(atPath: directory.file("d.bin").path))
                let result = try await HaulProcess.run([
                    "get", "--ca-certificate", nginx.caFile, "--certificate", nginx.clientCertificateFile,
                    "--private-key", nginx.clientKeyFile, url,
                ], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "d.bin") == content)
            }
        }
    }

    /// `haul daemon --ca-certificate` trusts the private CA for the downloads it is given.
    @Test func daemonTrustsThePrivateCA() async throws {
        try await NginxTLS.with { nginx in
            try await withTemporaryDirectory { directory in
                let content = Checksums.content(seed: 12, size: 40_000)
                try nginx.serve(content, as: "e.bin")
                let socket = directory.path + "/d.sock"
                try FileManager.default.createDirectory(at: directory.file("files"), withIntermediateDirectories: true)
                let daemon = try HaulProcess([
                    "daemon", "--socket", socket, "--state-dir", directory.path + "/state", "--no-tcp",
                    "--dir", directory.file("files").path, "--ca-certificate", nginx.caFile,
                ], in: directory.url)
                defer { daemon.send(SIGKILL) }
                #expect(await daemon.stderr.firstLine { $0.hasPrefix("haul daemon: ready") } != nil)
                let added = try await HaulProcess.run(["add", "--socket", socket, "--out", "e.bin", nginx.url("e.bin")], in: directory.url)
                #expect(added.status == 0, "stderr: \(added.stderr)")
                let watched = try await HaulProcess.run(["watch", "--socket", socket, "--until-done"], in: directory.url)
                #expect(watched.status == 0, "stderr: \(watched.stderr)")
                #expect(directory.contents(of: "files/e.bin") == content)
            }
        }
    }

    /// An unreadable or non-PEM certificate file is a usage error (exit 2) before anything starts.
    @Test func unusableFilesAreUsageErrors() async throws {
        try await withTemporaryDirectory { directory in
            try directory.write("not a certificate", to: "junk.pem")
            for options in [
                ["--ca-certificate", "missing.pem"], ["--ca-certificate", "junk.pem"],
                ["--certificate", "junk.pem"], ["--private-key", "junk.pem"],
            ] {
                let result = try await HaulProcess.run(["get"] + options + ["https://127.0.0.1:9/a"], in: directory.url)
                #expect(result.status == 2, "\(options): \(result.stderr)")
                #expect(result.stderr.contains(options[1]) || result.stderr.contains("private key"), "\(result.stderr)")
            }
        }
    }
}
