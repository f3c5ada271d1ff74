import Foundation
import Haul
import HaulTestServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The client commands end to end: a real `haul daemon`, the in-process test server, and the
/// `haul` binary run for each command.
@Suite(.timeLimit(.minutes(3))) struct ClientCommandTests {
    /// add prints a GID; watch --once shows its progress bar; pause stops it with its bytes kept; ls, ls --json and status show it; resume continues it with a range request; it completes with the checksum verified and the right bytes; rm takes it off the list and leaves the file.
    @Test func downloadLifecycle() async throws {
        try await withTestServer { server in
            try await withClientDaemon { daemon in
                let size = 2_000_000
                let content = Checksums.content(seed: 41, size: size)
                // Held at 1 MB until released: still running for watch and pause however slow the machine.
                let url = server.url("/file/life.bin", ["size": "\(size)", "seed": "41", "hold": "1000000"])

                let added = try await daemon.haul([
                    "add", url, "--out", "kept.bin", "--checksum", "sha-256=\(Checksums.sha256(content))",
                    "--header", "X-Client-Test: yes",
                ])
                #expect(added.status == 0, "stderr: \(added.stderr)")
                let gid = try #require(added.stdoutLines.first)
                #expect(gid.count == 16 && gid.allSatisfy(\.isHexDigit), "a GID: \(gid)")

                let running = try await daemon.waitForStatus(gid, "active with bytes") { $0.state == "active" && $0.completedBytes > 0 }
                #expect(running.name == "kept.bin")
                #expect(running.totalBytes == Int64(size))
                #expect(running.url == url)

                let snapshot = try await daemon.haul(["watch", "--once"])
                #expect(snapshot.status == 0, "stderr: \(snapshot.stderr)")
                let bar = snapshot.stdoutLines.first { $0.hasPrefix("kept.bin") }
                #expect(bar?.contains("[") == true && bar?.contains("%") == true && bar?.contains("ETA") == true, "\(snapshot.stdout)")
                #expect(snapshot.stdoutLines.last?.hasPrefix("daemon  1 active") == true, "\(snapshot.stdout)")
                #expect(!snapshot.stdout.contains("\u{1B}"), "no escape sequences in --once")

                let paused = try await daemon.haul(["pause", gid])
                #expect(paused.status == 0, "stderr: \(paused.stderr)")
                #expect(paused.stdoutLines == ["paused \(gid)"])
                let stopped = try await daemon.status(gid)
                #expect(stopped.state == "paused")
                #expect(stopped.completedBytes > 0 && stopped.completedBytes < Int64(size))

                let listed = try await daemon.haul(["ls"])
                #expect(listed.status == 0, "stderr: \(listed.stderr)")
                #expect(listed.stdoutLines.first?.hasPrefix("GID") == true)
                let row = try #require(listed.stdoutLines.first { $0.hasPrefix(gid) })
                #expect(row.hasSuffix("kept.bin"))
                #expect(row.contains("paused"))
                #expect(row.contains("%"))

                let json = try await daemon.haul(["ls", "--json"])
                let entries = try JSONDecoder().decode([ClientStatusJSON].self, from: Data(json.stdout.utf8))
                #expect(entries.map(\.gid) == [gid])

                let details = try await daemon.haul(["status", String(gid.prefix(6))])
                #expect(details.status == 0, "stderr: \(details.stderr)")
                #expect(details.stdoutLines.contains { $0.hasPrefix("gid") && $0.hasSuffix(gid) })
                #expect(details.stdoutLines.contains { $0.hasPrefix("state") && $0.hasSuffix("paused") })
                #expect(details.stdoutLines.contains { $0.hasPrefix("progress") && $0.contains("%") })

                // Still held: the resumed download waits at 1 MB until watch has shown it active.
                let resumed = try await daemon.haul(["resume", gid])
                #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
                #expect(resumed.stdoutLines == ["resumed \(gid)"])
                try await daemon.waitForStatus(gid, "active again") { $0.state == "active" }

                // Waits for the daemon to finish: ends by itself once nothing is active or queued.
                let watch = try daemon.start(["watch", "--until-done", "--interval", "100"])
                let firstView = await watch.stdout.firstLine { $0.hasPrefix("daemon  1 active") }
                #expect(firstView != nil, "watch shows the resumed download active")
                server.release(key: "/file/life.bin")
                let watched = await watch.result()
                #expect(watched.status == 0, "stderr: \(watched.stderr)")
                let finalPath = daemon.downloads.appendingPathComponent("kept.bin").path
                #expect(watched.stdoutLines.contains("done \(finalPath) (\(size) bytes)"), "\(watched.stdout)")

                let done = try await daemon.status(gid)
                #expect(done.state == "complete")
                #expect(done.path == finalPath)
                #expect(FileManager.default.contents(atPath: finalPath).map(Array.init) == content)
                let requests = server.requests(forKey: "/file/life.bin")
                #expect(requests.count >= 2)
                #expect(requests.last?.header("Range")?.hasPrefix("bytes=") == true, "resume continued with a range")
                #expect(requests.allSatisfy { $0.header("X-Client-Test") == "yes" })

                let removed = try await daemon.haul(["rm", gid])
                #expect(removed.status == 0, "stderr: \(removed.stderr)")
                #expect(removed.stdoutLines == ["removed \(gid)"])
                let after = try await daemon.haul(["ls"])
                #expect(!after.stdout.contains(gid))
                #expect(FileManager.default.fileExists(atPath: finalPath), "rm of a completed download keeps its file")
            }
        }
    }

    /// Several URLs give one GID each; pause --all and resume --all act on every one; a download added with --pause waits paused and is shown as such by ls and watch.
    @Test func severalDownloadsAndAll() async throws {
        try await withTestServer { server in
            try await withClientDaemon { daemon in
                // Each held half way, never released: all three are still running when paused.
                let urls = (1...3).map { n in
                    server.url("/file/many-\(n).bin", ["size": "600000", "seed": "\(n)", "hold": "300000"])
                }
                let added = try await daemon.haul(["add", "--pause"] + urls)
                #expect(added.status == 0, "stderr: \(added.stderr)")
                let gids = added.stdoutLines.filter { !$0.isEmpty }
                #expect(gids.count == 3)
                #expect(Set(gids).count == 3)

                let listed = try await daemon.haul(["ls", "--json"])
                let entries = try JSONDecoder().decode([ClientStatusJSON].self, from: Data(listed.stdout.utf8))
                #expect(entries.map(\.state) == ["paused", "paused", "paused"])
                #expect(Set(entries.map(\.gid)) == Set(gids))

                let view = try await daemon.haul(["watch", "--once"])
                #expect(view.stdoutLines.filter { $0.hasPrefix("(paused) many-") }.count == 3, "\(view.stdout)")
                #expect(view.stdoutLines.last?.hasPrefix("daemon  0 active, 0 waiting, 3 paused, 0 stopped") == true, "\(view.stdout)")
                // Paused downloads wait for a person: --until-done does not wait for them.
                let idle = try await daemon.haul(["watch", "--until-done"])
                #expect(idle.status == 0)

                let resumed = try await daemon.haul(["resume", "--all"])
                #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
                for gid in gids {
                    // Four run at once by default: each of the three starts and writes bytes.
                    try await daemon.waitForStatus(gid, "started") { $0.completedBytes > 0 }
                }
                let pausedAll = try await daemon.haul(["pause", "--all"])
                #expect(pausedAll.status == 0, "stderr: \(pausedAll.stderr)")
                var states: [String: String] = [:]
                for gid in gids { states[gid] = try await daemon.status(gid).state }
                #expect(states.values.allSatisfy { $0 == "paused" }, "\(states)")

                // An unfinished download is removed only with --force, and loses its part file.
                let victim = try #require(gids.first { states[$0] == "paused" }, "one is unfinished")
                let partsBefore = Self.partFiles(in: daemon.downloads)
                let refused = try await daemon.haul(["rm", victim])
                #expect(refused.status == 13)
                #expect(refused.stderr.contains("haul rm --force \(victim)"), "\(refused.stderr)")
                #expect(try await daemon.status(victim).state == "paused", "a refused rm changes nothing")
                #expect(Self.partFiles(in: daemon.downloads) == partsBefore)
                let forced = try await daemon.haul(["rm", "--force", victim])
                #expect(forced.status == 0, "stderr: \(forced.stderr)")
                #expect(forced.stdoutLines == ["removed \(victim)"])
                let left = try await daemon.haul(["ls", "--json"])
                let remaining = try JSONDecoder().decode([ClientStatusJSON].self, from: Data(left.stdout.utf8))
                #expect(Set(remaining.map(\.gid)) == Set(gids).subtracting([victim]))
                #expect(Self.partFiles(in: daemon.downloads).count == partsBefore.count - 1, "the removed download's part file is gone")
            }
        }
    }

    /// --dir names a directory inside the daemon's download directory (relative to it) and --out the file name; the file lands there with the right bytes.
    @Test func addIntoASubdirectory() async throws {
        try await withTestServer { server in
            try await withClientDaemon { daemon in
                let sub = daemon.downloads.appendingPathComponent("sub")
                try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
                let url = server.url("/file/nested.bin", ["size": "20000", "seed": "9"])
                let added = try await daemon.haul(["add", url, "--dir", "sub", "-o", "named.bin"])
                #expect(added.status == 0, "stderr: \(added.stderr)")
                let gid = try #require(added.stdoutLines.first)
                let watched = try await daemon.haul(["watch", "--until-done"])
                #expect(watched.status == 0, "stderr: \(watched.stderr)")
                let done = try await daemon.status(gid)
                #expect(done.state == "complete")
                #expect(done.path == sub.appendingPathComponent("named.bin").path)
                #expect(FileManager.default.contents(atPath: sub.appendingPathComponent("named.bin").path).map(Array.init)
                        == Checksums.content(seed: 9, size: 20000))
            }
        }
    }

    static func partFiles(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".part") }.sorted()
    }

    /// On a terminal, watch draws bars and redraws them in place with cursor movements, and
    /// prints a done line when the download finishes.
    ///
    /// The download is paused until watch has drawn its first view, so that it cannot finish
    /// before watch starts however slowly the processes start on a loaded machine (a CI run
    /// once saw only the final count). `--until-done` would end at that paused first view, so
    /// watch runs until the done line and is then stopped with SIGTERM, which script(1) passes on.
    @Test(.enabled(if: HaulProcess.canRunInTerminal)) func watchRedrawsInPlaceOnATerminal() async throws {
        try await withTestServer { server in
            try await withClientDaemon { daemon in
                // Held at a quarter until watch drew the paused view: the pause always finds it running.
                let url = server.url("/file/tty.bin", ["size": "800000", "seed": "5", "rate": "400000", "hold": "200000"])
                let added = try await daemon.haul(["add", url])
                let gid = try #require(added.stdoutLines.first)
                try await daemon.waitForStatus(gid, "active") { $0.state == "active" }
                let paused = try await daemon.haul(["pause", gid])
                #expect(paused.status == 0, "stderr: \(paused.stderr)")
                try await daemon.waitForStatus(gid, "paused") { $0.state == "paused" }
                let watch = try daemon.start(["watch", "--interval", "100"], inTerminal: true)
                let pausedView = await watch.stdout.firstLine { $0.contains("(paused) tty.bin ") }
                #expect(pausedView != nil, "the first view shows the paused download")
                server.release(key: "/file/tty.bin")
                let resumed = try await daemon.haul(["resume", gid])
                #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
                let donePath = daemon.downloads.appendingPathComponent("tty.bin").path
                let doneLine = await watch.stdout.firstLine { $0.contains("done \(donePath) (800000 bytes)") }
                #expect(doneLine != nil, "a done line when the download finishes")
                watch.send(SIGTERM)
                let watched = await watch.result()
                #expect(!watched.timedOut)
                #expect(watched.stdout.contains("[#"), "a bar with progress")
                #expect(watched.stdout.contains("\u{1B}[2A\r\u{1B}[J"), "the two-line block is redrawn in place")
                #expect(watched.stdoutLines.contains { $0.contains("tty.bin ") && !$0.contains("(paused)") }, "a bar line names the active file")
            }
        }
    }

    /// Ctrl-C ends watch with 130, after it printed the first view; the downloads go on in the daemon.
    @Test func watchEndsOnInterrupt() async throws {
        try await withTestServer { server in
            try await withClientDaemon { daemon in
                let url = server.url("/file/sigint.bin", ["size": "400000", "seed": "6", "rate": "200000"])
                let gid = try #require(try await daemon.haul(["add", url]).stdoutLines.first)
                let watch = try daemon.start(["watch"])
                let firstView = await watch.stdout.firstLine { $0.hasPrefix("daemon  ") }
                #expect(firstView != nil)
                watch.send(SIGINT)
                let result = await watch.result()
                #expect(result.status == 130, "stderr: \(result.stderr)")
                #expect(!result.signaled)
                let status = try await daemon.status(gid)
                #expect(status.state == "active" || status.state == "waiting" || status.state == "complete", "\(status)")
            }
        }
    }
}

