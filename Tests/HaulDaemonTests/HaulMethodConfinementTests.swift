import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// The `haul.*` methods over TCP write only inside `--dir` and the `--allow-dir` directories;
/// over the unix socket they write where the app says, as before.
@Suite(.timeLimit(.minutes(3))) struct HaulMethodConfinementTests {
    static let secret = "s3cret"

    /// A daemon's `haul.*` methods on a store of their own, with `downloads` as `--dir`,
    /// `allowed` as the one `--allow-dir`, and `outside` beside them holding a file `victim`.
    struct Fixture: Sendable {
        let root: URL
        let server: TestServer
        let handler: JSONRPCHandler

        var tcp: HandlerClient { HandlerClient(handler: handler, origin: RPCOrigin(transport: .tcp), token: HaulMethodConfinementTests.secret) }
        var socket: HandlerClient { HandlerClient(handler: handler) }
        var downloads: URL { root.appendingPathComponent("downloads") }
        var allowed: URL { root.appendingPathComponent("allowed") }
        var outside: URL { root.appendingPathComponent("outside") }
        var victim: URL { outside.appendingPathComponent("victim") }

        /// A request's JSON form, as `BackgroundSession` sends it.
        func request(_ directory: URL, name: String? = nil, policy: ConflictPolicy = .rename) throws -> JSONValue {
            try HaulSessionMethods.json(DownloadRequest(
                url: URL(string: server.url("/file/f", ["size": "2000", "rate": "2000"]))!, directory: directory,
                fileName: name, conflictPolicy: policy))
        }

        func listed(_ client: HandlerClient) async throws -> [JSONValue] {
            try await client.result("haul.list", ["app"]).arrayValue ?? []
        }
    }

    static func withFixture(_ body: @escaping @Sendable (Fixture) async throws -> Void) async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let root = temporary.url
        for name in ["downloads", "downloads/sub", "allowed", "outside"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        try Data("keep".utf8).write(to: root.appendingPathComponent("outside/victim"))
        // A link inside --dir that leads out of it, and one that stays inside.
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("downloads/escape").path, withDestinationPath: root.appendingPathComponent("outside").path)
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("downloads/inner").path, withDestinationPath: root.appendingPathComponent("downloads/sub").path)

        let host = SessionHost(configuration: .init(
            stateDirectory: root.appendingPathComponent("state"), manager: RPCTest.fastConfiguration()))
        try await host.start()
        let confinement = try DirectoryConfinement(
            downloadDirectory: root.appendingPathComponent("downloads"), allowed: [root.appendingPathComponent("allowed")])
        var methods = RPCMethodTable()
        HaulSessionMethods(host: host, confinement: confinement).register(in: &methods)
        let handler = JSONRPCHandler(methods: methods, secret: try RPCSecret(secret), secretThrottle: RPCTest.quickThrottle)
        do {
            try await withTestServer { server in
                try await body(Fixture(root: root, server: server, handler: handler))
            }
        } catch {
            await host.shutdown()
            throw error
        }
        await host.shutdown()
    }

    /// Over TCP, a directory outside `--dir` is refused, written plainly, with `..`, or
    /// through a symbolic link inside `--dir`; `conflictPolicy: overwrite` does not replace the
    /// file there; nothing is added, and a group with one such request is refused whole.
    @Test func tcpRefusesDirectoriesOutside() async throws {
        try await Self.withFixture { fixture in
            let attempts: [URL] = [
                fixture.outside,
                URL(fileURLWithPath: fixture.downloads.path + "/../outside"),
                URL(fileURLWithPath: fixture.downloads.path + "/sub/../../outside"),
                fixture.downloads.appendingPathComponent("escape"),
                URL(fileURLWithPath: "/"),
            ]
            for directory in attempts {
                let error = try await fixture.tcp.error(
                    "haul.add", ["app", try fixture.request(directory, name: "victim", policy: .overwrite)])
                #expect(error.message.contains("outside the directories"), "\(directory.path): \(error.message)")
                #expect(error.message.contains(fixture.downloads.path))
            }
            let group = try await fixture.tcp.error("haul.addGroup", [
                "app", "g", [try fixture.request(fixture.downloads), try fixture.request(fixture.outside, name: "victim", policy: .overwrite)],
            ])
            #expect(group.message.contains("outside the directories"))
            #expect(try await fixture.listed(fixture.tcp).isEmpty)
            #expect(try String(contentsOf: fixture.victim, encoding: .utf8) == "keep")
        }
    }

    /// Over TCP, `--dir`, a directory below it (also through a link that stays inside, which is
    /// replaced by where it leads) and an `--allow-dir` directory are accepted.
    @Test func tcpAcceptsDirectoriesInside() async throws {
        try await Self.withFixture { fixture in
            let cases: [(given: URL, expected: URL)] = [
                (fixture.downloads, fixture.downloads),
                (fixture.downloads.appendingPathComponent("sub"), fixture.downloads.appendingPathComponent("sub")),
                (fixture.downloads.appendingPathComponent("inner"), fixture.downloads.appendingPathComponent("sub")),
                (URL(fileURLWithPath: fixture.allowed.path + "/../allowed"), fixture.allowed),
            ]
            for (given, expected) in cases {
                let id = try #require(try await fixture.tcp.result("haul.add", ["app", try fixture.request(given)]).stringValue)
                let status = try await fixture.tcp.result("haul.status", ["app", .string(id)])
                let directory = try #require(status["request"]?["directory"]?.stringValue)
                #expect(URL(string: directory)?.standardizedFileURL.path == expected.path, "\(given.path) → \(directory)")
            }
        }
    }

    /// Over the unix socket an app names any directory, as before; deleting that download's
    /// file over TCP is refused, over the socket it is not.
    @Test func unixSocketNamesAnyDirectory() async throws {
        try await Self.withFixture { fixture in
            let id = try #require(try await fixture.socket.result("haul.add", ["app", try fixture.request(fixture.outside, name: "other")]).stringValue)
            let refused = try await fixture.tcp.error("haul.remove", ["app", .string(id), true])
            #expect(refused.message.contains("outside the directories"))
            #expect(try await fixture.listed(fixture.socket).count == 1)
            _ = try await fixture.socket.result("haul.remove", ["app", .string(id), true])
            #expect(try await fixture.listed(fixture.socket).isEmpty)
        }
    }

    /// An `--allow-dir` that does not exist stops the daemon from starting, naming it.
    @Test func missingAllowedDirectoryIsRefused() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let root = temporary.url
        #expect {
            try DirectoryConfinement(downloadDirectory: root, allowed: [root.appendingPathComponent("missing")])
        } throws: { error in
            (error as? HaulError)?.code == .directoryNotFound && "\(error)".contains("--allow-dir")
        }
    }
}
