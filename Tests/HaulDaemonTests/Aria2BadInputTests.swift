import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import Testing

/// The bad input, end to end: each gets the error aria2 would give (or a clear one),
/// nothing is added, changed or written, and the handler keeps serving.
@Suite(.timeLimit(.minutes(3))) struct Aria2BadInputTests {
    /// Escaping paths, wrong types, bad options, unknown GIDs and methods, malformed JSON,
    /// wrong secrets and requests over the limits: all refused, and nothing happens.
    @Test func badInputChangesNothing() async throws {
        let limits = JSONRPCLimits(maxRequestBytes: 4096, maxBatchLength: 5)
        try await Aria2Fixture.run(limits: limits) { f in
            let url = JSONValue.string(f.url("x.bin"))
            let parent = f.directory.deletingLastPathComponent()
            // A plain file where a `dir` names a directory.
            #expect(FileManager.default.createFile(atPath: f.directory.appendingPathComponent("a-file").path, contents: Data()))
            let before = try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted()
            // Code 1, with a message saying what was wrong.
            let refusals: [(String, [JSONValue], String)] = [
                ("aria2.addUri", [[url], ["out": "../escape.bin"]], "--out"),
                ("aria2.addUri", [[url], ["out": "sub/x.bin"]], "--out"),
                ("aria2.addUri", [[url], ["dir": "../"]], "outside the download directory"),
                ("aria2.addUri", [[url], ["dir": "/etc"]], "outside the download directory"),
                ("aria2.addUri", [[url], ["dir": .string(parent.path)]], "outside the download directory"),
                ("aria2.addUri", [[url], ["dir": "a-file"]], "is not a directory"),
                ("aria2.addUri", [[]], "URI is not provided."),
                ("aria2.addUri", [["ftp://example.org/x"]], "only http and https"),
                ("aria2.addUri", [["not a uri"]], "not a valid"),
                ("aria2.addUri", [[url, "ftp://example.org/x"]], "only http and https"),
                ("aria2.addUri", [[url], [:], -1], "Position must be greater than or equal to 0."),
                ("aria2.addUri", [[url], ["split": "many"]], "--split"),
                ("aria2.addUri", [[url], ["checksum": "sha-256=00"]], "--checksum"),
                ("aria2.addUri", [[url], ["gid": "0123456789abcdef"]], "--gid"),
                ("aria2.addUri", [[url], ["header": "no colon here"]], "--header"),
                ("aria2.tellStatus", ["0123456789abcdef"], "GID 0123456789abcdef is not found"),
                ("aria2.tellStatus", ["xyz"], "Invalid GID xyz"),
                ("aria2.tellStatus", ["0123456789abcdef0"], "Invalid GID 0123456789abcdef0"),
                ("aria2.tellStatus", ["０１"], "Invalid GID ０１"),
                ("aria2.pause", ["0123456789abcdef"], "is not found"),
                ("aria2.remove", ["abc"], "is not found"),
                ("aria2.changeOption", ["0123456789abcdef", ["out": "y"]], "is not found"),
                ("aria2.changeGlobalOption", [["dir": "../.."]], "outside the download directory"),
                ("aria2.addTorrent", ["AAAA"], "not supported"),
            ]
            for (method, params, mention) in refusals {
                let error = try await f.client.error(method, params)
                #expect(error.code == 1, "\(method) \(params)")
                #expect(error.message.contains(mention), "\(method) \(params): \(error.message)")
            }
            // Wrong parameter types: -32602.
            let wrongTypes: [(String, [JSONValue])] = [
                ("aria2.addUri", [url]), ("aria2.addUri", [[5]]), ("aria2.addUri", [[url], "options"]),
                ("aria2.addUri", [[url], [:], "0"]), ("aria2.addUri", [[url], ["split": .object([:])]]),
                ("aria2.tellStatus", [5]), ("aria2.tellStatus", []), ("aria2.tellStatus", ["0123456789abcdef", "gid"]),
                ("aria2.tellWaiting", ["0", 10]), ("aria2.tellWaiting", [0, .double(1.5)]), ("aria2.tellStopped", [0]),
                ("aria2.changePosition", ["0123456789abcdef", "1", "POS_SET"]),
                ("aria2.changeGlobalOption", [["a", "b"]]),
            ]
            for (method, params) in wrongTypes {
                #expect(try await f.client.error(method, params).code == -32602, "\(method) \(params)")
            }
            #expect(try await f.client.error("aria2.nope").code == -32601)
            #expect(try await f.client.raw("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.addUri\",")?["error"]?["code"] == -32700)
            // TCP without the secret, or with a wrong one.
            let noSecret = HandlerClient(handler: f.handler, origin: RPCOrigin(transport: .tcp))
            #expect(try await noSecret.error("aria2.addUri", [[url]]) == .unauthorized)
            let wrongSecret = HandlerClient(handler: f.handler, origin: RPCOrigin(transport: .tcp), token: "guess")
            #expect(try await wrongSecret.error("aria2.addUri", [[url]]) == .unauthorized)
            // Over the size and batch limits: refused whole.
            let huge = RPCTest.requestText("aria2.addUri", [[url], ["header": .string("X: " + String(repeating: "y", count: 5000))]])
            #expect(try await f.client.raw(huge)?["error"]?["code"] == -32600)
            let batch = (1...6).map { RPCTest.requestText("aria2.addUri", [[url], ["out": .string("b\($0).bin")]], id: .integer(Int64($0))) }
            #expect(try await f.client.raw("[" + batch.joined(separator: ",") + "]")?["error"]?["code"] == -32600)
            let multicall = (1...6).map { _ -> JSONValue in ["methodName": "aria2.addUri", "params": [[url]]] }
            #expect(try await f.client.error("system.multicall", [.array(multicall)]).code == -32600)

            // Nothing was added, written or changed.
            #expect(await f.manager.downloads().isEmpty)
            #expect(f.listing == ["a-file"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted() == before)
            #expect(try await f.client.result("aria2.getGlobalOption")["dir"] == .string(f.directory.path))
            #expect(f.server.requests(forKey: "/file/x.bin").isEmpty)

            // And the daemon keeps serving: the same call, done right, works over TCP.
            let gid = try #require(try await f.tcpClient.result("aria2.addUri", [[url]]).stringValue)
            try await f.finished(gid)
            #expect(try await f.tcpClient.result("aria2.tellStatus", [.string(gid), ["status"]]) == ["status": "complete"])
        }
    }

    /// Over TCP, multicall and batches carry the secret in every call and work as aria2 clients
    /// (aria2p among them) send them.
    @Test func multicallAndBatchOverTCP() async throws {
        try await Aria2Fixture.run { f in
            let token = JSONValue.string("token:\(Aria2Fixture.secret)")
            let results = try await f.tcpClient.result("system.multicall", [[
                ["methodName": "aria2.addUri", "params": [token, [.string(f.url("m1.bin"))]]],
                ["methodName": "aria2.addUri", "params": [token, [.string(f.url("m2.bin"))], ["out": "second.bin"]]],
                ["methodName": "aria2.getGlobalStat", "params": [token]],
            ]])
            let answers = try #require(results.arrayValue)
            #expect(answers.count == 3)
            let gids = answers.prefix(2).compactMap { $0.arrayValue?.first?.stringValue }
            #expect(gids.count == 2)
            let batch = try #require(try await f.tcpClient.raw("""
                [{"jsonrpc":"2.0","id":"s1","method":"aria2.tellStatus","params":["token:s3cret","\(gids[0])",["gid"]]},
                 {"jsonrpc":"2.0","id":"s2","method":"aria2.tellStatus","params":["token:s3cret","\(gids[1])",["gid"]]}]
                """))
            #expect(batch == [
                ["jsonrpc": "2.0", "id": "s1", "result": ["gid": .string(gids[0])]],
                ["jsonrpc": "2.0", "id": "s2", "result": ["gid": .string(gids[1])]],
            ])
            for gid in gids { try await f.finished(gid) }
            #expect(FileManager.default.fileExists(atPath: f.directory.appendingPathComponent("second.bin").path))
        }
    }
}
