import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// The client commands when something is wrong: no daemon, unknown GIDs, bad arguments, the
/// daemon's TCP endpoint with and without its secret.
@Suite(.timeLimit(.minutes(3))) struct ClientCommandErrorTests {
    /// With no daemon at the socket, every client command exits with 12 and says where it looked and how to start one.
    @Test func noDaemon() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory.file("nobody.sock").path
            for arguments in [
                ["ls"], ["status", "0123456789abcdef"], ["add", "http://127.0.0.1:9/x"], ["pause", "--all"],
                ["resume", "0123"], ["rm", "0123"], ["watch"], ["watch", "--once"],
            ] {
                let result = try await HaulProcess.run(arguments + ["--socket", socket], in: directory.url)
                #expect(result.status == 12, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("haul: error: no haul daemon at \(socket); start one with `haul daemon --socket \(socket)`"),
                        "\(arguments): \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            }
        }
    }

    /// Over TCP with no daemon listening, the message names the URL.
    @Test func noDaemonOverTCP() async throws {
        try await withTemporaryDirectory { directory in
            // Port 9 (discard) on loopback: nothing listens there on a test machine.
            let result = try await HaulProcess.run(["ls", "--rpc", "http://127.0.0.1:9", "--secret", "s"], in: directory.url)
            #expect(result.status == 12, "\(result.stderr)")
            #expect(result.stderr.contains("no haul daemon at http://127.0.0.1:9/jsonrpc; start one with `haul daemon --rpc-listen-port 9`"), "\(result.stderr)")
        }
    }

    /// An unknown GID, or a download in a state that does not allow the change, is an error with the daemon's message and exit 13; with several GIDs, the known ones are still acted on.
    @Test func unknownGID() async throws {
        try await withTestServer { server in
            try await withClientDaemon { daemon in
                let unknown = "0123456789abcdef"
                for arguments in [["status", unknown], ["pause", unknown], ["resume", unknown], ["rm", unknown], ["rm", "--force", unknown]] {
                    let result = try await daemon.haul(arguments)
                    #expect(result.status == 13, "\(arguments): \(result.stderr)")
                    #expect(result.stderr.contains("haul: error:") && result.stderr.contains("GID \(unknown) is not found"),
                            "\(arguments): \(result.stderr)")
                }

                let url = server.url("/file/known.bin", ["size": "1000", "seed": "2"])
                let gid = try #require(try await daemon.haul(["add", "--pause", url]).stdoutLines.first)
                // A state the daemon refuses: pausing a paused download.
                let twice = try await daemon.haul(["pause", gid])
                #expect(twice.status == 13)
                #expect(twice.stderr.contains("cannot be paused"), "\(twice.stderr)")

                let mixed = try await daemon.haul(["resume", unknown, gid])
                #expect(mixed.status == 13)
                #expect(mixed.stdoutLines == ["resumed \(gid)"])
                #expect(mixed.stderr.contains("GID \(unknown) is not found"))
            }
        }
    }

    /// Arguments that cannot be right are usage errors (2) before the daemon is asked: bad GIDs, a URL that is not http(s), --out with several URLs, a bad checksum or header, --socket with --rpc, --once with --until-done.
    @Test func usageErrors() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory.file("nobody.sock").path
            for arguments in [
                ["status", "xyz"], ["status", "0123456789abcdef0"], ["pause"], ["pause", "--all", "0123"], ["rm"],
                ["add"], ["add", "ftp://example.com/x"], ["add", "not a url"],
                ["add", "http://a/1", "http://a/2", "--out", "x"], ["add", "http://a/1", "--out", "a/b"],
                ["add", "http://a/1", "--checksum", "sha-256=zz"], ["add", "http://a/1", "--header", "no colon"],
                ["ls", "--rpc", "ftp://127.0.0.1:6800"], ["ls", "--rpc", "http://127.0.0.1:6800", "--socket", socket],
                ["watch", "--once", "--until-done"], ["watch", "--interval", "5"],
            ] {
                let result = try await HaulProcess.run(arguments + (arguments.contains("--socket") ? [] : ["--socket", socket]), in: directory.url)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
                #expect(!result.stderr.contains("no haul daemon"), "\(arguments) was refused before asking: \(result.stderr)")
            }
        }
    }

    /// A daemon's own rule: a --dir outside its download directory is refused with the daemon's message (13), and nothing is added.
    @Test func daemonRefusesDirectoryOutside() async throws {
        try await withClientDaemon { daemon in
            let result = try await daemon.haul(["add", "http://127.0.0.1:9/x.bin", "--dir", "../elsewhere"])
            #expect(result.status == 13, "\(result.stderr)")
            #expect(result.stderr.contains("http://127.0.0.1:9/x.bin: "), "\(result.stderr)")
            let listed = try await daemon.haul(["ls", "--json"])
            #expect(try JSONDecoder().decode([ClientStatusJSON].self, from: Data(listed.stdout.utf8)).isEmpty)
        }
    }

    /// Over TCP the daemon's secret is needed: with it, ls works; without it or with a wrong one, exit 13 and a message that says how to pass it.
    @Test func tcpNeedsTheSecret() async throws {
        try await withClientDaemon(tcpSecret: "right-secret") { daemon in
            let address = try #require(daemon.tcpAddress)
            let rpc = "http://\(address)/jsonrpc"
            let good = try await HaulProcess.run(["ls", "--rpc", rpc, "--secret", "right-secret"], in: daemon.root)
            #expect(good.status == 0, "\(good.stderr)")
            #expect(good.stdoutLines.first?.hasPrefix("GID") == true)

            for secret in [["--secret", "wrong-secret"], []] {
                let bad = try await HaulProcess.run(["ls", "--rpc", rpc] + secret, in: daemon.root)
                #expect(bad.status == 13, "\(secret): \(bad.stderr)")
                #expect(bad.stderr.contains("refused the secret; pass --secret SECRET or set HAUL_RPC_SECRET"), "\(secret): \(bad.stderr)")
            }
        }
    }
}
