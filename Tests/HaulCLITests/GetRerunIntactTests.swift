import Foundation
import GRDB
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get` run again over files an earlier run placed: a file still as it was placed
/// (size, modification time, inode) is reported done by the run itself, with the same lines
/// as the first run, and no request reaches the server; its earlier row is left as it is. A
/// file changed or deleted since is fetched again. Counted at the server.
@Suite(.timeLimit(.minutes(3))) struct GetRerunIntactTests {
    func urls(_ server: TestServer, _ count: Int, key: String, from start: Int = 0) -> [String] {
        (start..<start + count).map { server.url("/file/i\($0).bin", ["size": "\(4_000 + $0)", "seed": "\($0)", "key": key]) }
    }

    /// How many requests the server saw for each file, by index.
    func requestsPerFile(_ server: TestServer, key: String) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for request in server.requests(forKey: key) {
            let name = request.path.split(separator: "/").last.map(String.init) ?? ""
            guard name.hasPrefix("i"), name.hasSuffix(".bin"), let index = Int(name.dropFirst().dropLast(4)) else { continue }
            counts[index, default: 0] += 1
        }
        return counts
    }

    /// The group each download of `haul get`'s store is in, by ID (opened without pruning).
    func groups(state: URL) async throws -> [String: String?] {
        var configuration = DownloadManager.Configuration()
        configuration.retention = .keepAll
        let manager = try await DownloadManager.open(
            stateDirectory: state, session: "haul get", configuration: configuration, continueInterrupted: false)
        let downloads = await manager.downloads()
        await manager.shutdown()
        return Dictionary(uniqueKeysWithValues: downloads.map { ($0.id.description, $0.group) })
    }

    /// With every file present, the second run's `completed` lines are the first run's, byte
    /// for byte; the group and the summary count every file; nothing is requested; and the
    /// earlier downloads stay in the first run's group (their rows are not written).
    @Test func intactFilesAreReportedAsTheFirstRunReportedThem() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let batch = urls(server, 12, key: "json")
                let first = try await HaulProcess.run(["get", "--json", "-j", "4"] + batch, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                let state = URL(fileURLWithPath: directory.url.path + ".haul-state")
                let firstGroups = try await groups(state: state)
                let second = try await HaulProcess.run(["get", "--json", "-j", "4"] + batch, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")
                #expect(server.requests(forKey: "json").count == 12)

                let completedLines = { (lines: [String]) in lines.filter { $0.contains("\"event\":\"completed\"") }.sorted() }
                #expect(completedLines(second.stdoutLines).count == 12)
                #expect(completedLines(second.stdoutLines) == completedLines(first.stdoutLines))
                let events = try JSONEventLine.decodeAll(second.stdoutLines)
                let group = try #require(events.first { $0.event == "groupCompleted" })
                #expect(group.completed == 12 && group.failed == 0)
                let summary = try #require(events.last)
                #expect(summary.event == "summary")
                #expect(summary.total == 12 && summary.completed == 12 && summary.skipped == 0 && summary.failed == 0)
                #expect(summary.bytes == (0..<12).reduce(0) { $0 + Int64(4_000 + $1) })
                #expect(summary.receivedBytes == 0 && summary.exitCode == 0)

                let ids = events.filter { $0.event == "completed" }.compactMap(\.id)
                #expect(ids.count == 12)
                #expect(Set(firstGroups.values).count == 1)
                #expect(try await groups(state: state) == firstGroups, "the earlier rows were written")
            }
        }
    }

    enum Change: String, CaseIterable, CustomStringConvertible, Sendable {
        case sameSizeOtherTime, otherSize, deleted
        var description: String { rawValue }
    }

    /// A file changed since (same size and another modification time, or another size) or
    /// deleted is fetched again, the others not; a changed file is kept, the new copy placed
    /// beside it by the default `rename` policy; every file is reported done (exit 0).
    @Test(arguments: Change.allCases) func changedOrDeletedFileIsFetchedAgain(_ change: Change) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let key = "change-\(change)"
                let batch = urls(server, 6, key: key)
                let first = try await HaulProcess.run(["get", "-j", "3"] + batch, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                let file = directory.file("i2.bin")
                switch change {
                case .sameSizeOtherTime:
                    try Data(repeating: 0x55, count: 4_002).write(to: file)
                    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_500_000_000)], ofItemAtPath: file.path)
                case .otherSize:
                    try Data(repeating: 0x55, count: 10).write(to: file)
                case .deleted:
                    try FileManager.default.removeItem(at: file)
                }
                let second = try await HaulProcess.run(["get", "-j", "3"] + batch, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")
                let expectedCounts: [Int: Int] = [0: 1, 1: 1, 2: 2, 3: 1, 4: 1, 5: 1]
                #expect(requestsPerFile(server, key: key) == expectedCounts)
                #expect(second.stdoutLines.filter { $0.hasPrefix("done ") }.count == 6, "\(second.stdout)")
                #expect(second.stdoutLines.last?.hasPrefix("finished: 6 done, 0 failed of 6;") == true, "\(second.stdout)")
                let fetched = change == .deleted ? "i2.bin" : "i2 (1).bin"
                #expect(directory.contents(of: fetched) == Checksums.content(seed: 2, size: 4_002))
                if change != .deleted { #expect(directory.size(of: "i2.bin") == (change == .otherSize ? 10 : 4_002)) }
            }
        }
    }

    /// One directory with everything at once: intact files, deleted ones, changed ones, URLs
    /// never fetched and one that fails. Only the intact files go without a request; the exit
    /// status is the failure's (5, a 404), as it was before; a third run then asks only for
    /// the failed one again.
    @Test func mixedDirectory() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let key = "mixed"
                let earlier = urls(server, 10, key: key)
                let first = try await HaulProcess.run(["get", "-j", "4"] + earlier, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                for index in [1, 4] { try FileManager.default.removeItem(at: directory.file("i\(index).bin")) }
                try Data(repeating: 1, count: 3).write(to: directory.file("i7.bin"))
                let missing = server.url("/file/i99.bin", ["status": "404", "key": key])
                let batch = earlier + urls(server, 2, key: key, from: 10) + [missing]
                let second = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(second.status == 5, "stderr: \(second.stderr)")
                let expectedCounts: [Int: Int] = [0: 1, 1: 2, 2: 1, 3: 1, 4: 2, 5: 1, 6: 1, 7: 2, 8: 1, 9: 1, 10: 1, 11: 1, 99: 1]
                #expect(requestsPerFile(server, key: key) == expectedCounts)
                #expect(second.stdoutLines.filter { $0.hasPrefix("done ") }.count == 12, "\(second.stdout)")
                #expect(second.stdoutLines.last?.hasPrefix("finished: 12 done, 1 failed of 13;") == true, "\(second.stdout)")
                #expect(second.stderr.contains("failed \(missing)"), "\(second.stderr)")
                for index in 0..<12 where index != 7 {
                    #expect(directory.contents(of: "i\(index).bin") == Checksums.content(seed: UInt64(index), size: 4_000 + index))
                }
                let third = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(third.status == 5, "stderr: \(third.stderr)")
                // First run 10; second: 3 again, 2 new, the 404; third: the 404 only.
                let expected = 17
                #expect(server.requests(forKey: key).count == expected)
            }
        }
    }

    /// Checksums are part of what a request is: the same command with the same `--checksum`
    /// finds its file and reports the digest it was verified with; without it (another
    /// request), the file is fetched again and placed beside it, as before.
    @Test func checksumsGivenAgain() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file/i0.bin", ["size": "4000", "seed": "0", "key": "sum"])
                let digest = Checksums.sha256(Checksums.content(seed: 0, size: 4_000))
                let command = ["get", "--json", "--checksum", "sha256=\(digest)", url]
                let first = try await HaulProcess.run(command, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                let second = try await HaulProcess.run(command, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")
                #expect(server.requests(forKey: "sum").count == 1)
                let completed = try #require(try JSONEventLine.decodeAll(second.stdoutLines).first { $0.event == "completed" })
                #expect(completed.checksums == ["sha256": digest])
                let third = try await HaulProcess.run(["get", url], in: directory.url)
                #expect(third.status == 0, "stderr: \(third.stderr)")
                #expect(server.requests(forKey: "sum").count == 2)
                #expect(directory.contents(of: "i0 (1).bin") == Checksums.content(seed: 0, size: 4_000))
            }
        }
    }

    /// A nightly sync: the same command run again 20 and then 40 days after the files were
    /// placed (the store's dates moved back by hand) finds every file each time, fetches
    /// nothing and places no copy beside them. Before, `haul get`'s 30-day rule forgot the
    /// downloads 30 days after they were added, however often a run found their files, and the
    /// run after that fetched them all again, each placed beside the old one.
    @Test func filesFoundByEachRunAreNotForgotten() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let batch = urls(server, 4, key: "nightly")
                let state = URL(fileURLWithPath: directory.url.path + ".haul-state")
                let store = { try DatabaseQueue(path: state.appendingPathComponent("haul.sqlite").path) }
                func age(days: Double) async throws {
                    try await store().write { db in
                        try db.execute(sql: "UPDATE download SET createdAt = createdAt - ?", arguments: [days * 24 * 3600])
                    }
                }
                let first = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                for _ in 1...2 {
                    try await age(days: 20)
                    let again = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                    #expect(again.status == 0, "stderr: \(again.stderr)")
                    #expect(again.stdoutLines.filter { $0.hasPrefix("done ") }.count == 4, "\(again.stdout)")
                }
                #expect(server.requests(forKey: "nightly").count == 4)
                #expect(directory.names().filter { $0.hasSuffix(".bin") } == (0..<4).map { "i\($0).bin" })
            }
        }
    }
}
