import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get` and `haul gc` with a store that has history: a re-run finds completed files
/// without loading the store's history, and `haul gc` prunes and compacts it.
@Suite(.timeLimit(.minutes(2))) struct StoreHistoryTests {
    func urls(_ server: TestServer, _ count: Int, key: String) -> [String] {
        (0..<count).map { server.url("/file/h\($0).bin", ["size": "\(2_000 + $0)", "seed": "\($0)", "key": key]) }
    }

    /// A second run of the same command fetches nothing: its completed downloads are found in
    /// the store by URL, though the run does not load them up front.
    @Test func rerunFetchesNothingAgain() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let batch = urls(server, 5, key: "rerun")
                let first = try await HaulProcess.run(["get", "-j", "2"] + batch, in: directory.url)
                #expect(first.status == 0, "stderr: \(first.stderr)")
                let second = try await HaulProcess.run(["get", "-j", "2"] + batch, in: directory.url)
                #expect(second.status == 0, "stderr: \(second.stderr)")
                #expect(server.requests(forKey: "rerun").count == 5)
                #expect(directory.names().filter { $0.hasSuffix(".bin") }.count == 5)
            }
        }
    }

    /// `haul gc --keep N` leaves N finished downloads in haul get's session: a second gc finds
    /// nothing more to delete, and bad values are usage errors.
    @Test func gcKeepsTheNewest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let state = directory.url.path + ".haul-state"
                let run = try await HaulProcess.run(["get"] + urls(server, 6, key: "gc"), in: directory.url)
                #expect(run.status == 0, "stderr: \(run.stderr)")
                let gc = try await HaulProcess.run(["gc", "--state-dir", state, "--keep", "2"], in: directory.url)
                #expect(gc.status == 0, "stderr: \(gc.stderr)")
                #expect(gc.stdout.hasPrefix("haul gc: deleted 4 finished downloads"), "\(gc.stdout)")
                let again = try await HaulProcess.run(["gc", "--state-dir", state, "--keep", "2"], in: directory.url)
                #expect(again.stdout.hasPrefix("haul gc: deleted 0 finished downloads"), "\(again.stdout)")
                let bad = try await HaulProcess.run(["gc", "--state-dir", state, "--keep", "-1"], in: directory.url)
                #expect(bad.status == 2)
            }
        }
    }
}
