import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get`'s exit statuses, end to end: each kind of failure exits with its documented
/// status, and failures found before downloading leave nothing behind.
@Suite(.timeLimit(.minutes(2))) struct GetExitStatusTests {
    /// An unparsable URL and an ftp:// URL are usage errors (exit 2) and nothing is written.
    @Test(arguments: ["not a url", "ftp://127.0.0.1/file.bin", "http://"])
    func invalidURLIsUsageError(url: String) async throws {
        try await withTemporaryDirectory { directory in
            let result = try await HaulProcess.run(["get", url], in: directory.url)
            #expect(result.status == 2, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("haul: error:"))
            #expect(directory.names().isEmpty)
        }
    }

    /// A valid URL next to an invalid one is not downloaded either: the batch is checked before anything starts.
    @Test func oneInvalidURLStopsTheWholeBatch() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run(["get", server.url("/file/good.bin"), "ftp://127.0.0.1/bad"], in: directory.url)
                #expect(result.status == 2)
                #expect(directory.names().isEmpty)
                #expect(server.requests(forKey: "/file/good.bin").isEmpty)
            }
        }
    }

    /// Bad options exit 2 (not ArgumentParser's 64): unknown flag, -j 0, -o with several URLs, -o ../x, --checksum with several URLs, bad checksum syntax, unreadable input file, unknown input-file option.
    @Test(arguments: [
        ["--no-such-option", "http://127.0.0.1:9/a"],
        ["-j", "0", "http://127.0.0.1:9/a"],
        ["-o", "x.bin", "http://127.0.0.1:9/a", "http://127.0.0.1:9/b"],
        ["-o", "../x", "http://127.0.0.1:9/a"],
        ["--checksum", "sha256=\(String(repeating: "0", count: 64))", "http://127.0.0.1:9/a", "http://127.0.0.1:9/b"],
        ["--checksum", "sha256=xyz", "http://127.0.0.1:9/a"],
        ["--checksum", "crc99=00", "http://127.0.0.1:9/a"],
        ["--header", "no colon here", "http://127.0.0.1:9/a"],
        ["-i", "missing-list.txt"],
        ["--quiet", "--json", "http://127.0.0.1:9/a"],
        ["--timeout", "0", "http://127.0.0.1:9/a"],
        ["--timeout", "soon", "http://127.0.0.1:9/a"],
        ["--connect-timeout", "-1", "http://127.0.0.1:9/a"],
        ["--connect-timeout", "nan", "http://127.0.0.1:9/a"],
        [],
    ])
    func badOptionsAreUsageErrors(options: [String]) async throws {
        try await withTemporaryDirectory { directory in
            let sandbox = directory.file("sandbox")
            try FileManager.default.createDirectory(at: sandbox, withIntermediateDirectories: false)
            let result = try await HaulProcess.run(["get"] + options, in: sandbox)
            #expect(result.status == 2, "stderr: \(result.stderr)")
            #expect(!result.stderr.isEmpty)
            #expect(directory.names() == ["sandbox"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path).isEmpty)
        }
    }

    /// A destination directory that does not exist is made, with its parents, as aria2c does.
    @Test func missingDirectoryIsCreated() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run(["get", "-d", "new/nested/dir", server.url("/file/a.bin", ["size": "3000"])], in: directory.url)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.size(of: "new/nested/dir/a.bin") == 3000)
                #expect(try TemporaryDirectory.leftovers(in: directory.file("new/nested/dir")).isEmpty)
            }
        }
    }

    /// A destination that cannot be made (a file is in the way) exits 3 without contacting the server.
    @Test func uncreatableDirectoryExits3() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                try directory.write("not a directory", to: "blocker")
                let result = try await HaulProcess.run(["get", "-d", "blocker/sub", server.url("/file/a.bin")], in: directory.url)
                #expect(result.status == 3, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("blocker/sub"))
                #expect(server.requests(forKey: "/file/a.bin").isEmpty)
                #expect(directory.names() == ["blocker"])
            }
        }
    }

    /// A wrong checksum exits 6 and leaves neither the final file nor a part file.
    @Test func checksumMismatchExits6() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let wrong = Checksums.sha256(Checksums.content(seed: 99, size: 5000))
                let result = try await HaulProcess.run([
                    "get", "--checksum", "sha-256=\(wrong)", server.url("/file/sum.bin", ["size": "5000"]),
                ], in: directory.url)
                #expect(result.status == 6, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("failed "))
                #expect(directory.names().isEmpty)
            }
        }
    }

    /// A 404 exits 5, after a single request (a 404 is not retried), and no file is placed.
    @Test func notFoundExits5() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run(["get", "--json", server.url("/file/gone.bin", ["status": "404"])], in: directory.url)
                #expect(result.status == 5, "stderr: \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory.file("gone.bin").path))
                #expect(server.requests(forKey: "/file/gone.bin").count == 1)
                let failed = try #require(try JSONEventLine.decodeAll(result.stdoutLines).first { $0.event == "failed" })
                #expect(failed.error?.code == "httpStatus")
                #expect(failed.error?.exitCode == 5)
            }
        }
    }

    /// A response header with a control character (ESC) breaks HTTP: the server misbehaved,
    /// exit 7, after exactly one request although retries are allowed, and no file is placed.
    @Test func controlCharacterInHeaderExits7AfterOneRequest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/esc.bin", ["disposition": "attachment; filename=\"a\u{1B}[31mb.bin\""])
                let result = try await HaulProcess.run(["get", "--json", url], in: directory.url)
                #expect(result.status == 7, "stderr: \(result.stderr)")
                #expect(server.requests(forKey: "/file/esc.bin").count == 1)
                let failed = try #require(try JSONEventLine.decodeAll(result.stdoutLines).first { $0.event == "failed" })
                #expect(failed.error?.code == "invalidResponse")
                #expect(failed.error?.exitCode == 7)
                #expect(directory.names().filter { !$0.hasPrefix(".haul-") }.isEmpty)
            }
        }
    }

    /// A redirect loop exits 9.
    @Test func redirectLoopExits9() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run(["get", server.url("/loop")], in: directory.url)
                #expect(result.status == 9, "stderr: \(result.stderr)")
                #expect(directory.names().filter { !$0.hasPrefix(".haul-") }.isEmpty)
            }
        }
    }

    /// `--conflict fail` with an existing file exits 8 and leaves the existing file unchanged.
    @Test func conflictFailExits8() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                try directory.write("precious", to: "taken.bin")
                let result = try await HaulProcess.run([
                    "get", "--conflict", "fail", server.url("/file/taken.bin", ["size": "2000"]), "-o", "taken.bin",
                ], in: directory.url)
                #expect(result.status == 8, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "taken.bin") == Array("precious".utf8))
                #expect(directory.names() == ["taken.bin"])
            }
        }
    }

    /// A connection cut mid-body with `--retries 0` is a network failure: exit 4.
    @Test func droppedConnectionExits4() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run([
                    "get", "--retries", "0", server.url("/file/cut.bin", ["size": "100000", "drop": "1000"]),
                ], in: directory.url)
                #expect(result.status == 4, "stderr: \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory.file("cut.bin").path))
            }
        }
    }

    /// A server that falls silent mid-body is timed out after `--timeout` seconds (not the 30 s default): with `--retries 0`, exit 4 and a timeout message, and no file placed.
    @Test func silentServerTimesOutAfterTheGivenTimeout() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run([
                    "get", "--retries", "0", "--timeout", "1.5",
                    server.url("/file/mute.bin", ["size": "100000", "drop": "1000", "stall": "20"]),
                ], in: directory.url)
                #expect(result.status == 4, "stderr: \(result.stderr)")
                // Timed out by haul, not ended by the server's drop 20 s later ("connection lost").
                #expect(result.stderr.contains("read timeout"), "stderr: \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory.file("mute.bin").path))
            }
        }
    }

    /// Two failures of the same kind exit with that kind's status; failures of different kinds exit 1, and the good download still completes.
    @Test func sameKindKeepsItsStatusMixedKindsExit1() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let same = try await HaulProcess.run([
                    "get", server.url("/file/a.bin", ["status": "404"]), server.url("/file/b.bin", ["status": "410"]),
                ], in: directory.url)
                #expect(same.status == 5, "stderr: \(same.stderr)")

                try directory.write("""
                    \(server.url("/file/missing.bin", ["status": "404"]))
                    \(server.url("/file/corrupt.bin", ["size": "100"]))
                      checksum=sha256=\(String(repeating: "ab", count: 32))
                    \(server.url("/file/fine.bin", ["size": "100"]))
                    """, to: "mixed.txt")
                let mixed = try await HaulProcess.run(["get", "-i", "mixed.txt"], in: directory.url)
                #expect(mixed.status == 1, "stderr: \(mixed.stderr)")
                #expect(directory.size(of: "fine.bin") == 100)
                #expect(mixed.stdoutLines.last?.hasPrefix("finished: 1 done, 2 failed of 3") == true)
                #expect(mixed.stderr.components(separatedBy: "\n").filter { $0.hasPrefix("failed ") }.count == 2)
            }
        }
    }
}
