import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stopping `haul get` and running the same command again: part files are kept, the next run
/// continues from them, and a file that changed on the server in between is downloaded anew,
/// never spliced from old and new bytes.
@Suite(.timeLimit(.minutes(2))) struct GetInterruptionTests {
    /// 3 MiB at 2 MiB/s, held at 1 MiB until the test releases it: the first run is still
    /// under way when it is stopped however slowly the machine runs, and a whole run takes 1.5 s.
    static let size = 3 << 20
    static let rate = 2 << 20
    static let holdAt = 1 << 20
    /// Interrupt once this much has arrived.
    static let interruptAfter: Int64 = 256 << 10

    /// SIGINT mid-download exits 130 with the part file kept; the same command then resumes from the kept bytes (started.resumedFrom > 0, a Range request) and the final file is exact.
    @Test func sigintKeepsPartFileAndTheNextRunResumes() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/big.bin", ["size": "\(Self.size)", "seed": "5", "rate": "\(Self.rate)", "hold": "\(Self.holdAt)"])
                let arguments = ["get", "--json", url]

                let first = try HaulProcess(arguments, in: directory.url)
                try #require(await first.stdout.progress(reaching: Self.interruptAfter) != nil)
                first.send(SIGINT)
                let stopped = await first.result()
                #expect(stopped.status == 130, "stderr: \(stopped.stderr)")
                #expect(!stopped.signaled)
                #expect(stopped.stderr.contains("interrupted: part files kept; run the same command again to continue"))
                let events = try JSONEventLine.decodeAll(stopped.stdoutLines)
                #expect(events.contains { $0.event == "paused" })
                #expect(events.last?.event == "summary")
                #expect(events.last?.interrupted == true)
                #expect(events.last?.exitCode == 130)
                #expect(!FileManager.default.fileExists(atPath: directory.file("big.bin").path))
                let leftovers = directory.haulLeftovers()
                let part = try #require(leftovers.first { $0.hasSuffix(".part") })
                let kept = try #require(directory.size(of: part))
                #expect(kept >= Int(Self.interruptAfter))
                server.release(key: "/file/big.bin")

                let second = try await HaulProcess.run(arguments, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")
                let started = try #require(try JSONEventLine.decodeAll(second.stdoutLines).first { $0.event == "started" })
                #expect((started.resumedFrom ?? 0) >= Self.interruptAfter)
                #expect(directory.contents(of: "big.bin") == Checksums.content(seed: 5, size: Self.size))
                #expect(directory.haulLeftovers().isEmpty)
                let resumeRequest = try #require(server.requests(forKey: "/file/big.bin").last)
                #expect(resumeRequest.header("Range") == "bytes=\(started.resumedFrom ?? -1)-")
                #expect(resumeRequest.status == 206)
            }
        }
    }

    /// SIGTERM stops the same way as SIGINT but exits 143, keeping the part file.
    @Test func sigtermExits143AndKeepsPartFile() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/term.bin", ["size": "\(Self.size)", "rate": "\(Self.rate)", "hold": "\(Self.holdAt)"])
                let run = try HaulProcess(["get", "--json", url], in: directory.url)
                try #require(await run.stdout.progress(reaching: Self.interruptAfter) != nil)
                run.send(SIGTERM)
                let result = await run.result()
                #expect(result.status == 143, "stderr: \(result.stderr)")
                #expect(result.stderr.contains("interrupted: part files kept"))
                #expect(directory.haulLeftovers().contains { $0.hasSuffix(".part") })
                #expect(!FileManager.default.fileExists(atPath: directory.file("term.bin").path))
            }
        }
    }

    /// After kill -9 mid-download and a change of the file on the server, the next run asks to resume (If-Range), gets the new file, and the result is exactly the new content, never old prefix + new suffix.
    @Test func killedRunThenChangedFileIsNeverSpliced() async throws {
        try await expectNoSplice(stoppingWith: SIGKILL, key: "/file/killed.bin")
    }

    /// After SIGINT mid-download and a change of the file on the server, the next run's result is exactly the new content, never old prefix + new suffix.
    @Test func interruptedRunThenChangedFileIsNeverSpliced() async throws {
        try await expectNoSplice(stoppingWith: SIGINT, key: "/file/interrupted.bin")
    }

    private func expectNoSplice(stoppingWith signal: Int32, key: String) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let seed: UInt64 = 11
                let url = server.url(key, ["size": "\(Self.size)", "seed": "\(seed)", "rate": "\(Self.rate)", "hold": "\(Self.holdAt)"])
                // Small checkpoints, so that a kill -9 finds a recorded checkpoint (the
                // library's default is every 16 MiB or 5 s).
                let arguments = ["get", "--json", "--checkpoint-bytes", "65536", url]

                let first = try HaulProcess(arguments, in: directory.url)
                try #require(await first.stdout.progress(reaching: Self.interruptAfter) != nil)
                try #require(await first.stdout.checkpoint() != nil, "no checkpoint was recorded before the stop")
                first.send(signal)
                let stopped = await first.result()
                if signal == SIGKILL {
                    #expect(stopped.signaled && stopped.status == SIGKILL)
                } else {
                    #expect(stopped.status == 130, "stderr: \(stopped.stderr)")
                }
                let requestsBefore = server.requests(forKey: key).count
                server.release(key: key)

                server.changeContent(forKey: key)
                let second = try await HaulProcess.run(arguments, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")

                let newContent = Checksums.content(seed: seed &+ 1, size: Self.size)
                let placed = try #require(directory.contents(of: key.split(separator: "/").last.map(String.init) ?? ""))
                #expect(placed.count == newContent.count)
                #expect(placed == newContent, "the file mixes old and new bytes")
                #expect(directory.haulLeftovers().isEmpty)

                // The second run did try to resume: it sent If-Range with the old validator,
                // and the server answered with the whole new file.
                let retry = try #require(server.requests(forKey: key).dropFirst(requestsBefore).first)
                #expect(retry.header("Range")?.hasPrefix("bytes=") == true)
                #expect(retry.header("If-Range") != nil)
                #expect(retry.status == 200)
                let started = try #require(try JSONEventLine.decodeAll(second.stdoutLines).first { $0.event == "started" })
                #expect(started.resumedFrom == 0)
            }
        }
    }
}
