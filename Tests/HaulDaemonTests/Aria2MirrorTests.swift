import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// Several URIs per download through aria2's methods: addUri with mirrors, getUris,
/// changeUri and getServers, against a real manager and in-process test servers.
@Suite(.timeLimit(.minutes(2))) struct Aria2MirrorTests {
    /// addUri with two URIs makes one download with a mirror; getUris lists both (`waiting` before it runs); the file, split over both, arrives exact.
    @Test func addUriWithTwoURIsUsesBoth() async throws {
        try await Aria2Fixture.run(transfers: DaemonTransferOptions(minSplitSize: 64 << 10)) { f in
            try await withTestServer { other in
                let size = 1 << 20
                let query = ["size": "\(size)", "seed": "61", "rate": "\(256 << 10)"]
                let first = f.server.url("/file/m.bin", query)
                let second = other.url("/file/m.bin", query)
                let gid = try await f.client.result("aria2.addUri", [
                    [.string(first), .string(second)],
                    ["pause": "true", "split": "4", "max-connection-per-server": "2"],
                ]).stringValue ?? ""
                #expect(try await f.client.result("aria2.getUris", [.string(gid)]) == [
                    ["uri": .string(first), "status": "waiting"], ["uri": .string(second), "status": "waiting"],
                ])
                let id = try #require(DownloadID(gid))
                #expect(await f.manager.snapshot(id)?.request.mirrors == [URL(string: second)!])
                _ = try await f.client.result("aria2.unpause", [.string(gid)])

                // Both URIs serve at once: getServers lists each with its speed, getUris marks both used.
                let servers = try await waitForValue("both servers in use") { () async throws -> [JSONValue]? in
                    let answer = try await f.client.result("aria2.getServers", [.string(gid)])
                    let list = answer.arrayValue?.first?["servers"]?.arrayValue ?? []
                    return list.count == 2 ? list : nil
                }
                #expect(Set(servers.compactMap { $0["uri"]?.stringValue }) == [first, second])
                #expect(Set(servers.compactMap { $0["currentUri"]?.stringValue }) == [first, second])
                #expect(servers.allSatisfy { $0["downloadSpeed"]?.stringValue.flatMap(Int.init) != nil })
                // tellStatus counts the connections over both URIs (at most 2 each).
                let connections = try await waitForValue("several connections") { () async throws -> Int? in
                    let status = try await f.client.result("aria2.tellStatus", [.string(gid), ["connections"]])
                    let count = status["connections"]?.stringValue.flatMap(Int.init) ?? 0
                    return count > 1 ? count : nil
                }
                #expect(connections <= 4)
                let uris = try await f.client.result("aria2.getUris", [.string(gid)])
                #expect(uris == [["uri": .string(first), "status": "used"], ["uri": .string(second), "status": "used"]])
                // tellStatus and getFiles show the same list in files[].uris.
                let status = try await f.client.result("aria2.tellStatus", [.string(gid), ["files"]])
                #expect(status["files"]?.arrayValue?.first?["uris"] == uris)
                let files = try await f.client.result("aria2.getFiles", [.string(gid)])
                #expect(files.arrayValue?.first?["uris"] == uris)

                try await f.finished(gid)
                #expect(try await f.status(gid, ["status"]) == ["status": "complete"])
                let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("m.bin").path)
                #expect(data == Data(TestContent.bytes(seed: 61, size: size)))
                #expect(f.server.requests(forKey: "/file/m.bin").contains { $0.status == 206 || $0.status == 200 })
                #expect(other.requests(forKey: "/file/m.bin").contains { $0.status == 206 })
            }
        }
    }

    /// A changeUri that puts a URI of another server first does not send it the credentials
    /// and cookies given with the download for the first one.
    @Test func changeUriKeepsCredentialsWithTheirServer() async throws {
        try await Aria2Fixture.run { f in
            try await withTestServer { other in
                let query = ["size": "1500", "seed": "4"]
                let first = f.server.url("/file/c.bin", query)
                let second = other.url("/file/c.bin", query)
                let gid = try await f.client.result("aria2.addUri", [
                    [.string(first)],
                    ["pause": "true", "out": "c.bin", "header": ["Authorization: Bearer for-the-first", "Cookie: s=1", "X-Note: kept"]],
                ]).stringValue ?? ""
                #expect(try await f.client.result("aria2.changeUri", [.string(gid), 1, [.string(first)], [.string(second)]]) == [1, 1])
                _ = try await f.client.result("aria2.unpause", [.string(gid)])
                try await f.finished(gid)
                let sent = try #require(other.requests(forKey: "/file/c.bin").first)
                #expect(sent.header("authorization") == nil)
                #expect(sent.header("cookie") == nil)
                #expect(sent.header("x-note") == "kept")
            }
        }
    }

    /// changeUri as aria2: deletes each listed URI once, inserts the new ones at `position` of what is left, skips ones that are not http(s), and answers [deleted, added]; the first URI left is the download's URL.
    @Test func changeUriEditsTheList() async throws {
        try await Aria2Fixture.run { f in
            let a = f.url("a.bin", size: 1500, seed: 1)
            let b = f.url("b.bin", size: 1500, seed: 1)
            let c = f.url("c.bin", size: 1500, seed: 1)
            let gid = try await f.client.result("aria2.addUri", [[.string(a), .string(b)], ["pause": "true", "out": "x.bin"]]).stringValue ?? ""
            func uris() async throws -> [String] {
                (try await f.client.result("aria2.getUris", [.string(gid)]).arrayValue ?? []).compactMap { $0["uri"]?.stringValue }
            }
            #expect(try await f.client.result("aria2.changeUri", [.string(gid), 1, [], [.string(c), "ftp://x/y"], 1]) == [0, 1])
            #expect(try await uris() == [a, c, b])
            #expect(try await f.client.result("aria2.changeUri", [.string(gid), 1, [.string(a), .string(a)], []]) == [1, 0])
            #expect(try await uris() == [c, b])
            let id = try #require(DownloadID(gid))
            #expect(await f.manager.snapshot(id)?.request.url == URL(string: c))
            #expect(await f.manager.snapshot(id)?.request.mirrors == [URL(string: b)!])
            // A URI already listed, or added twice, is listed (and counted) once.
            #expect(try await f.client.result("aria2.changeUri", [.string(gid), 1, [], [.string(b), .string(a), .string(a)]]) == [0, 1])
            #expect(try await uris() == [c, b, a])
            #expect(try await f.client.result("aria2.changeUri", [.string(gid), 1, [.string(a)], []]) == [1, 0])
            _ = try await f.client.result("aria2.unpause", [.string(gid)])
            try await f.finished(gid)
            let data = FileManager.default.contents(atPath: f.directory.appendingPathComponent("x.bin").path)
            #expect(data == Data(TestContent.bytes(seed: 1, size: 1500)))
        }
    }
}
