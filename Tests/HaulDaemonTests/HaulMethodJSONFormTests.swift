import Foundation
@testable import Haul
@testable import HaulDaemon
import Testing

/// The `haul.*` parameters in the JSON a person writes: every key with a default in Swift may
/// be left out, and a value that does not fit is refused in one sentence naming the field.
@Suite(.timeLimit(.minutes(2))) struct HaulMethodJSONFormTests {
    typealias Fixture = HaulMethodConfinementTests.Fixture

    /// A request with only its URL and directory (a plain path).
    static func minimal(_ fixture: Fixture, _ name: String) -> JSONValue {
        ["url": .string(fixture.server.url("/file/\(name)", ["size": "2000"])), "directory": .string(fixture.downloads.path)]
    }

    /// `haul.attach` with only the settings that differ keeps Swift's defaults for the others.
    @Test func attachTakesPartialSettings() async throws {
        try await HaulMethodConfinementTests.withFixture { fixture in
            _ = try await fixture.socket.result("haul.attach", ["app", ["maxConcurrentDownloads": 16]])
            _ = try await fixture.socket.result("haul.attach", ["other", ["groupOrder": "sequential", "maxDownloadsPerHost": .null]])
            let stored = try await DownloadManager.storedSessions(stateDirectory: fixture.root.appendingPathComponent("state"))
            let settings = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.settings) })
            #expect(settings["app"] == SessionSettings(maxConcurrentDownloads: 16))
            #expect(settings["other"] == SessionSettings(groupOrder: .sequential))
        }
    }

    /// `haul.add` and `haul.addGroup` take requests of a URL and a directory; the other keys
    /// take their defaults, as `haul.status` shows.
    @Test func addAndAddGroupTakeMinimalRequests() async throws {
        try await HaulMethodConfinementTests.withFixture { fixture in
            let id = try #require(try await fixture.socket.result("haul.add", ["app", Self.minimal(fixture, "a")]).stringValue)
            let request = try await fixture.socket.result("haul.status", ["app", .string(id)])["request"]
            #expect(request?["priority"] == 0)
            #expect(request?["conflictPolicy"] == "rename")
            #expect(request?["headers"] == [])
            #expect(request?["directory"]?.stringValue.flatMap { URL(string: $0)?.path } == fixture.downloads.path)

            guard case .object(var named) = Self.minimal(fixture, "c") else { Issue.record("not an object"); return }
            named["fileName"] = "c.bin"
            let ids = try await fixture.socket.result("haul.addGroup", ["app", "g", [Self.minimal(fixture, "b"), .object(named)]])
            #expect(ids.arrayValue?.count == 2)
            #expect(try await fixture.socket.result("haul.group", ["app", "g"])["name"] == "g")
            #expect(try await fixture.listed(fixture.socket).count == 3)
        }
    }

    /// A missing, wrong-typed or wrong-enum field is refused with one sentence that names it by
    /// its path and says what was expected; nothing is added.
    @Test func refusalsNameTheField() async throws {
        try await HaulMethodConfinementTests.withFixture { fixture in
            func request(_ key: String, _ value: JSONValue) -> JSONValue {
                guard case .object(var object) = Self.minimal(fixture, "a") else { return .null }
                object[key] = value
                return .object(object)
            }
            let calls: [(method: String, params: [JSONValue], message: String)] = [
                ("haul.addGroup", ["app", "g", [Self.minimal(fixture, "a"), ["directory": .string(fixture.downloads.path)]]],
                 "parameter 2 (requests): requests[1].url is required but missing"),
                ("haul.add", ["app", request("priority", "high")],
                 "parameter 1 (request): request.priority must be an integer, got a string"),
                ("haul.add", ["app", request("priority", .double(1.5))],
                 "parameter 1 (request): request.priority must be an integer, got 1.5"),
                ("haul.attach", ["app", ["groupOrder": "fast"]],
                 #"parameter 1 (settings): settings.groupOrder must be one of "interleaved", "sequential", got "fast""#),
                ("haul.add", ["app", request("conflictPolicy", "replace")],
                 #"parameter 1 (request): request.conflictPolicy must be one of "rename", "overwrite", "skip", "fail", got "replace""#),
                ("haul.add", ["app", request("headers", [["name": "X-A"]])],
                 "parameter 1 (request): request.headers[0].value is required but missing"),
                ("haul.add", ["app", request("headers", [.null])],
                 "parameter 1 (request): request.headers[0] must be an object, got null"),
                ("haul.attach", ["app", ["maxConcurrentDownloads": 0]],
                 "parameter 1 (settings): settings.maxConcurrentDownloads must allow at least 1 download at once, got 0"),
                ("haul.add", ["app", request("metadata", ["k": 1])],
                 "parameter 1 (request): request.metadata.k must be a string, got a number"),
                ("haul.add", ["app", request("split", 0)],
                 "parameter 1 (request): request.split must be from 1 to 1024, got 0"),
                ("haul.add", ["app", request("checksums", [["algorithm": "sha256", "hex": "00"]])],
                 "parameter 1 (request): request.checksums[0].hex is not valid: a sha256 checksum is 64 hex digits, got '00'"),
                ("haul.add", ["app", request("url", "ftp://example.com/a")],
                 "parameter 1 (request): request.url must be an http or https URL with a host, got 'ftp://example.com/a'"),
                ("haul.add", ["app", "a request"], "parameter 1 (request): request must be an object, got a string"),
                ("haul.add", ["app", .null], "parameter 1 (request): request must be an object, got null"),
                ("haul.add", ["app"], "parameter 1 (request) is required but missing"),
            ]
            for call in calls {
                let error = try await fixture.socket.error(call.method, call.params)
                #expect(error.code == -32602)
                #expect(error.message == "Invalid params: \(call.message)")
            }
            #expect(try await fixture.listed(fixture.socket).isEmpty)
        }
    }
}
