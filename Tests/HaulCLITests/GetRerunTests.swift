import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// Running the same `haul get` again in the same directory, with the same store (a nightly
/// sync, yesterday's list retried): a file still as it was placed is not fetched again; a file
/// deleted, or changed on disk since (other size, other modification time), is fetched again,
/// and the output counts every file of the batch as the first run did. Counted at the server.
@Suite(.timeLimit(.minutes(2))) struct GetRerunTests {
    static let count = 60

    func urls(_ server: TestServer, key: String) -> [String] {
        (0..<Self.count).map { server.url("/file/r\($0).bin", ["size": "\(3_000 + $0)", "seed": "\($0)", "key": key]) }
    }

    /// How many requests the server saw for each file of the batch, by index.
    func requestsPerFile(_ server: TestServer, key: String) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for request in server.requests(forKey: key) {
            let name = request.path.split(separator: "/").last.map(String.init) ?? ""
            guard name.hasPrefix("r"), name.hasSuffix(".bin"), let index = Int(name.dropFirst().dropLast(4)) else { continue }
            counts[index, default: 0] += 1
        }
        return counts
    }

    /// Present and unchanged files cost no request; deleted ones, and ones whose size or
    /// modification time changed, are fetched again (a changed file is kept, the new copy
    /// placed beside it by the default `rename` policy), and all are reported done.
    @Test func onlyDeletedAndChangedFilesAreFetchedAgain() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let batch = urls(server, key: "again")
                let first = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                let deleted = 0..<10, resized = 10..<15, touched = 15..<20
                for index in deleted { try FileManager.default.removeItem(at: directory.file("r\(index).bin")) }
                for index in resized {
                    let handle = try FileHandle(forWritingTo: directory.file("r\(index).bin"))
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data("changed".utf8))
                    try handle.close()
                }
                for index in touched {
                    try FileManager.default.setAttributes(
                        [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: directory.path("r\(index).bin"))
                }
                let second = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")
                let counts = requestsPerFile(server, key: "again")
                for index in 0..<Self.count {
                    let again = deleted.contains(index) || resized.contains(index) || touched.contains(index)
                    #expect(counts[index] == (again ? 2 : 1), "r\(index).bin: \(counts[index] ?? 0) requests")
                }
                #expect(second.stdoutLines.filter { $0.hasPrefix("done ") }.count == Self.count, "\(second.stdout)")
                #expect(second.stdoutLines.last?.hasPrefix("finished: \(Self.count) done, 0 failed of \(Self.count);") == true, "\(second.stdout)")
                for index in deleted {
                    #expect(try Data(contentsOf: directory.file("r\(index).bin")).count == 3_000 + index)
                }
                for index in resized {
                    #expect(try Data(contentsOf: directory.file("r\(index).bin")).count == 3_000 + index + 7)
                    #expect(try Data(contentsOf: directory.file("r\(index) (1).bin")).count == 3_000 + index)
                }
                // The earlier downloads of the files fetched again were replaced, not kept
                // beside the new ones: the store holds one download per request.
                #expect(try await storedDownloads(state: URL(fileURLWithPath: directory.url.path + ".haul-state")) == Self.count)
            }
        }
    }

    /// How many downloads `haul get`'s store holds (opened without pruning).
    func storedDownloads(state: URL) async throws -> Int {
        var configuration = DownloadManager.Configuration()
        configuration.retention = .keepAll
        let manager = try await DownloadManager.open(
            stateDirectory: state, session: "haul get", configuration: configuration, continueInterrupted: false)
        let count = await manager.downloads().count
        await manager.shutdown()
        return count
    }

    /// A third run, with every file present and unchanged, sends no request at all and still
    /// reports each file done and the batch complete (exit 0).
    @Test func everyFilePresentCostsNoRequest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let batch = urls(server, key: "present")
                for _ in 0..<2 {
                    let run = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                    #expect(run.status == 0, "stderr: \(run.stderr)")
                }
                #expect(server.requests(forKey: "present").count == Self.count)
                // Files fetched again in a run become the ones the next run finds.
                try FileManager.default.removeItem(at: directory.file("r3.bin"))
                let third = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(third.status == 0, "stderr: \(third.stderr)")
                let fourth = try await HaulProcess.run(["get", "-j", "4"] + batch, in: directory.url)
                #expect(fourth.status == 0, "stderr: \(fourth.stderr)")
                #expect(server.requests(forKey: "present").count == Self.count + 1)
                #expect(fourth.stdoutLines.filter { $0.hasPrefix("done ") }.count == Self.count)
                #expect(fourth.stdoutLines.last?.hasPrefix("finished: \(Self.count) done, 0 failed of \(Self.count);") == true, "\(fourth.stdout)")
            }
        }
    }
}
