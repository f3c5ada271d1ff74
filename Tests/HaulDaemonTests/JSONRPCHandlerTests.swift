import Foundation
@testable import HaulDaemon
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// The JSON-RPC 2.0 layer on its own, with a few test methods: parsing, errors, notifications,
/// batches, limits and the system methods.
@Suite struct JSONRPCHandlerTests {
    /// Test methods: `test.echo` answers its params, `test.fail` fails, `test.count` counts calls.
    struct Methods {
        let counter = NIOLockedValueBox(0)
        var table = RPCMethodTable()

        init() {
            let counter = self.counter
            table.register("test.echo") { parameters, _ in .array(parameters.values) }
            table.register("test.fail") { (_, _) async throws(JSONRPCError) -> JSONValue in throw .failed("boom") }
            table.register("test.count") { _, _ in
                .integer(Int64(counter.withLockedValue { value in
                    value += 1
                    return value
                }))
            }
            table.register("test.gid") { (parameters, _) async throws(JSONRPCError) -> JSONValue in
                .string(try parameters.string(0, "gid"))
            }
            table.registerNotification("test.onSomething")
        }

        var calls: Int { counter.withLockedValue { $0 } }
    }

    func client(_ methods: Methods, limits: JSONRPCLimits = JSONRPCLimits()) throws -> HandlerClient {
        HandlerClient(handler: JSONRPCHandler(methods: methods.table, secret: try RPCSecret("x"), limits: limits))
    }

    /// A call is answered with its result and its own id, whether the id is a string or a number.
    @Test func answersWithResultAndSameID() async throws {
        let client = try client(Methods())
        let byString = try await client.raw(#"{"jsonrpc":"2.0","id":"abc","method":"test.echo","params":[1,"two"]}"#)
        #expect(byString == ["jsonrpc": "2.0", "id": "abc", "result": [1, "two"]])
        let byNumber = try await client.raw(#"{"jsonrpc":"2.0","id":7,"method":"test.echo"}"#)
        #expect(byNumber == ["jsonrpc": "2.0", "id": 7, "result": []])
    }

    /// A body that is not JSON gets -32700 with a null id.
    @Test func malformedJSONIsAParseError() async throws {
        let client = try client(Methods())
        for body in ["{bad", "", "[1,", #"{"id":1,"method":"test.echo""#] {
            let answer = try await client.raw(body)
            #expect(answer?["error"]?["code"] == -32700, "body \(body)")
            #expect(answer?["id"] == .null)
        }
    }

    /// Objects that are not requests get -32600 and run nothing.
    @Test func invalidRequestsAreRefused() async throws {
        let methods = Methods()
        let client = try client(methods)
        let cases: [(String, JSONValue)] = [
            ("5", .null),
            (#""test.count""#, .null),
            (#"{"jsonrpc":"2.0","id":1}"#, 1),
            (#"{"jsonrpc":"2.0","id":2,"method":5}"#, 2),
            (#"{"jsonrpc":"1.0","id":3,"method":"test.count"}"#, 3),
            (#"{"jsonrpc":"2.0","id":{"a":1},"method":"test.count"}"#, .null),
        ]
        for (body, id) in cases {
            let answer = try await client.raw(body)
            #expect(answer?["error"]?["code"] == -32600, "body \(body)")
            #expect(answer?["id"] == id, "body \(body)")
        }
        #expect(methods.calls == 0)
    }

    /// Named params and params that are not an array get -32602.
    @Test func namedParamsAreInvalidParams() async throws {
        let methods = Methods()
        let client = try client(methods)
        let named = try await client.raw(#"{"jsonrpc":"2.0","id":1,"method":"test.count","params":{"a":1}}"#)
        #expect(named?["error"]?["code"] == -32602)
        let scalar = try await client.raw(#"{"jsonrpc":"2.0","id":1,"method":"test.count","params":3}"#)
        #expect(scalar?["error"]?["code"] == -32602)
        #expect(methods.calls == 0)
    }

    /// An unknown method gets -32601 naming it.
    @Test func unknownMethodIsNotFound() async throws {
        let error = try await client(Methods()).error("aria2.nope")
        #expect(error.code == -32601)
        #expect(error.message == "No such method: aria2.nope")
    }

    /// A method's failure is answered in aria2's shape: code 1 and its message.
    @Test func methodFailureUsesCodeOne() async throws {
        let error = try await client(Methods()).error("test.fail")
        #expect(error == JSONRPCError(code: 1, message: "boom"))
    }

    /// A missing or mistyped parameter gets -32602 naming the parameter.
    @Test func wrongParameterTypesAreNamed() async throws {
        let client = try client(Methods())
        let missing = try await client.error("test.gid")
        #expect(missing.code == -32602)
        #expect(missing.message.contains("parameter 0 (gid) is required"))
        let wrong = try await client.error("test.gid", [5])
        #expect(wrong.code == -32602)
        #expect(wrong.message.contains("parameter 0 (gid) must be a string, got a number"))
    }

    /// A call without id is refused with -32600 and not run, as aria2 does (it has no
    /// client-to-server notifications), even for an unknown method.
    @Test func callsWithoutIdAreRefused() async throws {
        let methods = Methods()
        let client = try client(methods)
        let answer = try await client.raw(#"{"jsonrpc":"2.0","method":"test.count"}"#)
        #expect(answer?["error"]?["code"] == -32600)
        #expect(answer?["id"] == .null)
        #expect(try await client.raw(#"{"jsonrpc":"2.0","method":"nope"}"#)?["error"]?["code"] == -32600)
        #expect(methods.calls == 0)
    }

    /// A batch is answered in order, one answer per element; an element without id or an
    /// invalid one gets its own error and does not run.
    @Test func batchesAnswerInOrder() async throws {
        let methods = Methods()
        let client = try client(methods)
        let answer = try await client.raw("""
            [{"jsonrpc":"2.0","id":1,"method":"test.count"},
             {"jsonrpc":"2.0","method":"test.count"},
             5,
             {"jsonrpc":"2.0","id":"b","method":"test.count"}]
            """)
        let answers = try #require(answer?.arrayValue)
        #expect(answers.count == 4)
        #expect(answers[0] == ["jsonrpc": "2.0", "id": 1, "result": 1])
        #expect(answers[1]["error"]?["code"] == -32600)
        #expect(answers[2]["error"]?["code"] == -32600)
        #expect(answers[3] == ["jsonrpc": "2.0", "id": "b", "result": 2])
        #expect(methods.calls == 2)
    }

    /// An empty batch gets an empty array, as from aria2.
    @Test func emptyBatchGetsEmptyArray() async throws {
        let client = try client(Methods())
        #expect(try await client.raw("[]") == .array([]))
    }

    /// A body over the size limit is refused before it is read, and runs nothing.
    @Test func oversizedBodiesAreRefused() async throws {
        let methods = Methods()
        let client = try client(methods, limits: JSONRPCLimits(maxRequestBytes: 100))
        let body = RPCTest.requestText("test.count", [.string(String(repeating: "x", count: 200))])
        let answer = try await client.raw(body)
        #expect(answer?["error"]?["code"] == -32600)
        #expect(answer?["error"]?["message"]?.stringValue?.contains("the limit is 100") == true)
        #expect(methods.calls == 0)
    }

    /// A batch longer than the limit is refused whole: none of its calls runs.
    @Test func longBatchesAreRefused() async throws {
        let methods = Methods()
        let client = try client(methods, limits: JSONRPCLimits(maxBatchLength: 3))
        let calls = (1...4).map { RPCTest.requestText("test.count", [], id: .integer(Int64($0))) }
        let answer = try await client.raw("[" + calls.joined(separator: ",") + "]")
        #expect(answer?["error"]?["code"] == -32600)
        #expect(answer?["error"]?["message"]?.stringValue?.contains("a batch of 4 calls; the limit is 3") == true)
        #expect(methods.calls == 0)
    }

    /// Deep nesting is refused without decoding (which would exhaust the stack), within the
    /// default size limit.
    @Test func deepNestingIsRefused() async throws {
        let client = try client(Methods())
        let depth = 1_000_000
        let answer = try await client.raw(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(answer?["error"]?["code"] == -32600)
        let shallow = try await client.raw(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":[[[["ok"]]]]}"#)
        #expect(shallow?["result"] == [[[["ok"]]]])
    }

    /// Brackets inside strings, escaped quotes included, do not count as nesting.
    @Test func nestingScanSkipsStrings() {
        #expect(JSONNesting.isWithin(2, Array(#"[{"a":"[[[[{{{{\"[["}]"#.utf8)))
        #expect(!JSONNesting.isWithin(2, Array(#"[[["x"]]]"#.utf8)))
        #expect(JSONNesting.isWithin(3, Array(#"[[["x"]]]"#.utf8)))
    }

    /// The scan counts a top-level array's elements (commas inside strings and nested values
    /// do not count), so a long batch is refused before it is decoded.
    @Test func scanCountsBatchElements() async throws {
        #expect(JSONNesting.scan(32, Array(#"[{"a":[1,2],"b":"x,y"}, 2 ,"3"]"#.utf8)).batchLength == 3)
        #expect(JSONNesting.scan(32, Array(" [ ] ".utf8)).batchLength == 0)
        #expect(JSONNesting.scan(32, Array("[[]]".utf8)).batchLength == 1)
        #expect(JSONNesting.scan(32, Array(#"{"a":[1,2,3]}"#.utf8)).batchLength == nil)
        let calls = Array(repeating: #"{"method":"x"}"#, count: 100_000).joined(separator: ",")
        let answer = try await client(Methods()).raw("[" + calls + "]")
        #expect(answer?["error"]?["message"]?.stringValue?.contains("a batch of 100000 calls; the limit is 1000") == true)
        // Not even parsed: elements that are not JSON get the batch's refusal, not a parse error.
        let unparsed = try await client(Methods()).raw("[" + Array(repeating: "x", count: 1001).joined(separator: ",") + "]")
        #expect(unparsed?["error"]?["message"]?.stringValue?.contains("a batch of 1001 calls") == true)
    }

    /// `system.multicall` answers each call as a one-element array or a fault, refuses nested
    /// multicalls and elements that are not calls.
    @Test func multicallAnswersEachCall() async throws {
        let methods = Methods()
        let result = try await client(methods).result("system.multicall", [[
            ["methodName": "test.echo", "params": [1]],
            ["methodName": "test.nope"],
            ["methodName": "system.multicall", "params": [[]]],
            5,
            ["params": []],
            ["methodName": "test.count"],
        ]])
        let answers = try #require(result.arrayValue)
        #expect(answers.count == 6)
        #expect(answers[0] == [[1]])
        #expect(answers[1]["code"] == -32601)
        #expect(answers[2] == ["code": 1, "message": "Recursive system.multicall forbidden."])
        #expect(answers[3] == ["code": 1, "message": "system.multicall expected struct."])
        #expect(answers[4] == ["code": 1, "message": "Missing methodName."])
        #expect(answers[5] == [1])
        #expect(methods.calls == 1)
    }

    /// `system.listMethods` lists the registered methods and the system ones;
    /// `system.listNotifications` the declared notifications.
    @Test func listsMethodsAndNotifications() async throws {
        let client = try client(Methods())
        let methods = try await client.result("system.listMethods")
        #expect(methods == ["test.echo", "test.fail", "test.count", "test.gid", "system.multicall", "system.listMethods", "system.listNotifications"])
        #expect(try await client.result("system.listNotifications") == ["test.onSomething"])
    }
}
