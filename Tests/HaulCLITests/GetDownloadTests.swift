import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get` downloading successfully: URLs from arguments and input files, per-line options,
/// and the plain and JSON output.
@Suite(.timeLimit(.minutes(2))) struct GetDownloadTests {
    /// URLs from arguments and from an input file with out=, dir=, checksum= and header= lines all end up as complete files with the right bytes, exit 0, and no part files left.
    @Test func argumentsAndInputFileDownloadEverything() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let sizes = [1: 150_000, 2: 3_000, 3: 70_000, 4: 0]
                let renamed = Checksums.content(seed: 3, size: sizes[3]!)
                let nested = Checksums.content(seed: 4, size: sizes[4]!)
                try FileManager.default.createDirectory(at: directory.file("nested"), withIntermediateDirectories: true)
                try directory.write("""
                    # a comment, then a blank line

                    \(server.url("/file/three.bin", ["size": "\(sizes[3]!)", "seed": "3"]))
                      out=renamed.bin
                      checksum=sha-256=\(Checksums.sha256(renamed))
                      header=X-Haul-Test: from-input-file
                    \(server.url("/file/four.bin", ["size": "\(sizes[4]!)", "seed": "4"]))
                    \tdir=nested
                    \tchecksum=sha256=\(Checksums.sha256(nested))
                    """, to: "list.txt")

                let result = try await HaulProcess.run([
                    "get", "-i", "list.txt", "--header", "X-Shared: yes",
                    server.url("/file/one.bin", ["size": "\(sizes[1]!)", "seed": "1"]),
                    server.url("/file/two.bin", ["size": "\(sizes[2]!)", "seed": "2"]),
                ], in: directory.url)

                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "one.bin") == Checksums.content(seed: 1, size: sizes[1]!))
                #expect(directory.contents(of: "two.bin") == Checksums.content(seed: 2, size: sizes[2]!))
                #expect(directory.contents(of: "renamed.bin") == renamed)
                #expect(directory.contents(of: "nested/four.bin") == nested)
                #expect(directory.haulLeftovers().isEmpty)
                #expect(try TemporaryDirectory.leftovers(in: directory.file("nested")).isEmpty)

                let doneLines = result.stdoutLines.filter { $0.hasPrefix("done ") }
                #expect(doneLines.count == 4)
                #expect(doneLines.contains("done renamed.bin (\(sizes[3]!) bytes)"))
                #expect(doneLines.contains("done nested/four.bin (0 bytes)"))
                #expect(result.stdoutLines.last?.hasPrefix("finished: 4 done, 0 failed of 4") == true)

                let three = server.requests(forKey: "/file/three.bin")
                #expect(three.first?.header("X-Haul-Test") == "from-input-file")
                #expect(three.first?.header("X-Shared") == "yes")
                #expect(server.requests(forKey: "/file/one.bin").first?.header("X-Haul-Test") == nil)
            }
        }
    }

    /// With `--json`, every stdout line is a JSON object, and a run shows queued, started (with resumedFrom and the final URL after redirects), completed (with path, bytes and checksums), groupCompleted and a last summary line.
    @Test func jsonLinesDescribeTheRun() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let content = Checksums.content(seed: 7, size: 40_000)
                let redirected = server.url("/redirect", ["n": "2", "to": "/file/target.bin?size=40000&seed=7"])
                let result = try await HaulProcess.run([
                    "get", "--json", "-o", "target.bin", "--checksum", "sha256=\(Checksums.sha256(content))", redirected,
                ], in: directory.url)

                #expect(result.status == 0, "stderr: \(result.stderr)")
                let events = try JSONEventLine.decodeAll(result.stdoutLines)
                let names = events.map(\.event)
                #expect(names.first == "queued")
                #expect(names.last == "summary")
                #expect(names.contains("groupCompleted"))

                let started = try #require(events.first { $0.event == "started" })
                #expect(started.resumedFrom == 0)
                #expect(started.url == redirected)
                #expect(started.finalURL?.hasSuffix("/file/target.bin?size=40000&seed=7") == true)

                let completed = try #require(events.first { $0.event == "completed" })
                #expect(completed.bytes == 40_000)
                #expect(completed.path == directory.file("target.bin").path)
                #expect(completed.checksums?["sha256"] == Checksums.sha256(content))
                #expect(completed.alreadyExisted == false)

                let summary = try #require(events.last)
                #expect(summary.bytes == 40_000)
                #expect(summary.receivedBytes == 40_000)
                #expect(summary.completed == 1)
                #expect(summary.failed == 0)
                #expect(summary.skipped == 0)
                #expect(summary.exitCode == 0)
                #expect(summary.interrupted == false)
                #expect(directory.contents(of: "target.bin") == content)
            }
        }
    }

    /// `-i -` reads the list from standard input, and `--conflict skip` leaves an existing file alone and still exits 0.
    @Test func inputFromStandardInputAndSkipConflict() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                try directory.write("mine", to: "kept.bin")
                let list = """
                    \(server.url("/file/kept.bin", ["size": "500"]))
                    \(server.url("/file/new.bin", ["size": "600", "seed": "9"]))
                    """
                let result = try await HaulProcess.run(["get", "-i", "-", "--conflict", "skip"], in: directory.url, input: list)

                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(directory.contents(of: "kept.bin") == Array("mine".utf8))
                #expect(directory.contents(of: "new.bin") == Checksums.content(seed: 9, size: 600))
                #expect(result.stdoutLines.contains("skipped kept.bin"))
                #expect(result.stdoutLines.last?.contains("(1 skipped)") == true)
            }
        }
    }

    /// `-q` prints nothing at all when every download succeeds.
    @Test func quietPrintsNothingOnSuccess() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let result = try await HaulProcess.run(["get", "-q", server.url("/file/q.bin", ["size": "1000"])], in: directory.url)
                #expect(result.status == 0)
                #expect(result.stdout.isEmpty)
                #expect(result.stderr.isEmpty)
                #expect(directory.size(of: "q.bin") == 1000)
            }
        }
    }

    /// Many small files from one input file all arrive, with one done line each, in well under the test's timeout.
    @Test func manySmallFiles() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let count = 300
                let list = (0..<count).map { server.url("/file/many-\($0).bin", ["size": "\(100 + $0)", "seed": "\($0)"]) }
                try directory.write(list.joined(separator: "\n"), to: "many.txt")
                let result = try await HaulProcess.run(["get", "-j", "8", "-i", "many.txt"], in: directory.url)

                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(result.stdoutLines.filter { $0.hasPrefix("done ") }.count == count)
                for index in [0, count / 2, count - 1] {
                    #expect(directory.contents(of: "many-\(index).bin") == Checksums.content(seed: UInt64(index), size: 100 + index))
                }
                #expect(directory.haulLeftovers().isEmpty)
            }
        }
    }
}
