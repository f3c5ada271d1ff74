import Foundation
import Haul
@testable import HaulDaemon
import HaulTestSupport
import NIOConcurrencyHelpers
import Testing

/// aria2's secret: where it is required, how it is compared and throttled, and its file.
@Suite struct JSONRPCSecretTests {
    func handler(_ methods: JSONRPCHandlerTests.Methods, throttle: SecretThrottle.Policy = RPCTest.quickThrottle) throws -> JSONRPCHandler {
        JSONRPCHandler(methods: methods.table, secret: try RPCSecret("s3cret"), secretThrottle: throttle)
    }

    func tcp(_ handler: JSONRPCHandler, token: String?) -> HandlerClient {
        HandlerClient(handler: handler, origin: RPCOrigin(transport: .tcp), token: token)
    }

    /// On TCP a call without the secret, or with a wrong one, is refused with aria2's
    /// "Unauthorized" and does not run.
    @Test func tcpRequiresTheSecret() async throws {
        let methods = JSONRPCHandlerTests.Methods()
        let handler = try handler(methods)
        #expect(try await tcp(handler, token: nil).error("test.count") == .unauthorized)
        #expect(try await tcp(handler, token: "guess").error("test.count") == .unauthorized)
        #expect(try await tcp(handler, token: "").error("test.count") == .unauthorized)
        #expect(methods.calls == 0)
    }

    /// With the right secret the call runs, and the secret is not among its parameters.
    @Test func rightSecretIsTakenOff() async throws {
        let handler = try handler(JSONRPCHandlerTests.Methods())
        #expect(try await tcp(handler, token: "s3cret").result("test.echo", ["a"]) == ["a"])
    }

    /// On the unix socket no secret is needed, and one that is given (even wrong) is taken off.
    @Test func unixSocketNeedsNoSecret() async throws {
        let handler = try handler(JSONRPCHandlerTests.Methods())
        let client = HandlerClient(handler: handler)
        #expect(try await client.result("test.echo", ["a"]) == ["a"])
        #expect(try await client.result("test.echo", ["token:whatever", "a"]) == ["a"])
    }

    /// The listing methods need no secret on TCP; multicall's calls each carry their own.
    @Test func systemMethodsAndMulticall() async throws {
        let methods = JSONRPCHandlerTests.Methods()
        let client = tcp(try handler(methods), token: nil)
        #expect(try await client.result("system.listMethods").arrayValue?.isEmpty == false)
        #expect(try await client.result("system.listNotifications") == ["test.onSomething"])
        let results = try await client.result("system.multicall", [[
            ["methodName": "test.count", "params": ["token:s3cret"]],
            ["methodName": "test.count", "params": []],
            ["methodName": "test.count", "params": ["token:wrong"]],
        ]])
        #expect(results == [[1], ["code": 1, "message": "Unauthorized"], ["code": 1, "message": "Unauthorized"]])
        #expect(methods.calls == 1)
    }

    /// Right after a wrong secret, checks are spaced out: one whose slot is further away than
    /// the throttle allows is refused without being compared, even with the right secret.
    @Test func wrongSecretsSlowTheNextChecks() async throws {
        let methods = JSONRPCHandlerTests.Methods()
        let handler = try handler(methods, throttle: SecretThrottle.Policy(base: .seconds(60), maxWait: .zero))
        #expect(try await tcp(handler, token: "guess").error("test.count") == .unauthorized)
        let refused = try await tcp(handler, token: "s3cret").error("test.count")
        #expect(refused.code == 1)
        #expect(refused.message.hasPrefix("Unauthorized (too many wrong secrets"))
        #expect(methods.calls == 0)
        // The unix socket is not affected.
        #expect(try await HandlerClient(handler: handler).result("test.count") == 1)
    }

    /// The secret matches only itself, whatever the length of the guess; an empty one is refused.
    @Test func secretComparison() throws {
        let secret = try RPCSecret("abc")
        #expect(secret.matches("abc"))
        for guess in ["abd", "ab", "abcd", "", "ABC"] { #expect(!secret.matches(guess)) }
        #expect(throws: (any Error).self) { try RPCSecret("") }
        let random = RPCSecret.randomValue()
        #expect(random.count == 64 && random.allSatisfy(\.isHexDigit))
        #expect(random != RPCSecret.randomValue())
    }

    // MARK: The throttle, without I/O

    let start = ContinuousClock.now

    /// With no failure every check runs at once; after failures the spacing doubles up to the cap.
    @Test func throttleSpacingDoubles() {
        var throttle = SecretThrottle(policy: SecretThrottle.Policy(base: .milliseconds(100), cap: .milliseconds(350), maxWait: .seconds(30)))
        #expect(throttle.admit(at: start) == .checkNow)
        throttle.failed(at: start)
        #expect(throttle.penalty == .milliseconds(100))
        #expect(throttle.admit(at: start) == .checkAt(start + .milliseconds(100)))
        throttle.failed(at: start + .milliseconds(100))
        #expect(throttle.penalty == .milliseconds(200))
        throttle.failed(at: start + .milliseconds(100))
        #expect(throttle.penalty == .milliseconds(350))
        throttle.failed(at: start + .milliseconds(100))
        #expect(throttle.penalty == .milliseconds(350))
    }

    /// Checks that arrive together get successive slots (a flood of guesses is serialised),
    /// and those beyond `maxWait` are refused.
    @Test func throttleSerialisesAndRefuses() {
        var throttle = SecretThrottle(policy: SecretThrottle.Policy(base: .seconds(1), cap: .seconds(1), maxWait: .seconds(2)))
        throttle.failed(at: start)
        #expect(throttle.admit(at: start) == .checkAt(start + .seconds(1)))
        #expect(throttle.admit(at: start) == .checkAt(start + .seconds(2)))
        #expect(throttle.admit(at: start) == .refuse)
        // Later, once the slots have passed, a check runs at once again.
        #expect(throttle.admit(at: start + .seconds(10)) == .checkNow)
    }

    /// After a quiet `forgiveAfter`, failures are forgotten.
    @Test func throttleForgives() {
        var throttle = SecretThrottle(policy: SecretThrottle.Policy(base: .seconds(1), forgiveAfter: .seconds(60)))
        throttle.failed(at: start)
        throttle.failed(at: start)
        #expect(throttle.failures == 2)
        #expect(throttle.admit(at: start + .seconds(61)) == .checkNow)
        #expect(throttle.failures == 0)
    }

    /// The gate waits for each check's slot (here on a virtual clock), so that a run of wrong
    /// guesses takes ever longer, and the right secret after them waits its turn too.
    @Test func gateWaitsForSlots() async {
        let clock = NIOLockedValueBox(start)
        let sleeps = NIOLockedValueBox<[Duration]>([])
        let start = self.start
        let timing = SecretGate.Timing(
            now: { clock.withLockedValue { $0 } },
            sleep: { deadline in
                clock.withLockedValue { now in
                    sleeps.withLockedValue { $0.append(now.duration(to: deadline)) }
                    now = max(now, deadline)
                }
            })
        let gate = SecretGate(
            secret: try! RPCSecret("s3cret"),
            policy: SecretThrottle.Policy(base: .milliseconds(100), cap: .seconds(5), maxWait: .seconds(30)), timing: timing)
        for _ in 0..<4 { #expect(await gate.verify("guess") == .rejected) }
        #expect(await gate.verify("s3cret") == .accepted)
        #expect(sleeps.withLockedValue { $0 } == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
        #expect(clock.withLockedValue { start.duration(to: $0) } == .milliseconds(1500))
    }

    // MARK: The secret file

    /// With no file, a random secret is written with mode 0600; the next start reads the same one.
    @Test func secretFileIsCreatedPrivateAndReused() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.file("state")
        let first = try RPCSecretFile.loadOrCreate(in: directory)
        #expect(first.created)
        #expect(first.value.count == 64)
        let path = directory.appendingPathComponent(RPCSecretFile.defaultFileName).path
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let second = try RPCSecretFile.loadOrCreate(in: directory)
        #expect(!second.created)
        #expect(second.value == first.value)
        #expect(try RPCSecretFile.load(in: directory) == first.value)
        #expect(try RPCSecretFile.load(in: directory.appendingPathComponent("elsewhere")) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [RPCSecretFile.defaultFileName])
    }

    /// A secret file other users can read, or an empty one, is refused with a message that
    /// says how to fix it.
    @Test func unsafeSecretFilesAreRefused() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url
        let path = directory.appendingPathComponent(RPCSecretFile.defaultFileName).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("mine\n".utf8), attributes: [.posixPermissions: 0o644]))
        #expect { try RPCSecretFile.loadOrCreate(in: directory) } throws: { error in
            (error as? HaulError)?.message.contains("chmod 600") == true
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try RPCSecretFile.loadOrCreate(in: directory).value == "mine")
        try Data().write(to: URL(fileURLWithPath: path))
        #expect { try RPCSecretFile.loadOrCreate(in: directory) } throws: { error in
            (error as? HaulError)?.message.contains("is empty") == true
        }
    }
}
