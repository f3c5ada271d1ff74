import Foundation
import NIOCore

/// The daemon's JSON-RPC 2.0 endpoint: takes a request body (one call or a batch), checks
/// aria2's secret, calls the registered methods and encodes the answer.
///
/// - Bodies over `limits` are refused before they are decoded, with `-32600` and a message
///   naming the limit; so are bodies nesting deeper than the limit allows.
/// - A batch is answered by an array with one response per element, in order; calls run one
///   after another, so that a batch can add a download and then ask for it. An empty batch
///   gets `[]`, as from aria2.
/// - A call without `id` is not run: it gets -32600, as from aria2 (which has no
///   client-to-server notifications).
/// - The secret (`"token:SECRET"` first in `params`) is taken off the parameters whenever it
///   is there. It is required on TCP for every method with `.required` secret policy, and not
///   checked on the unix socket. Each distinct secret in one body is checked once.
/// - `system.multicall`, `system.listMethods` and `system.listNotifications` are built in.
package struct JSONRPCHandler: RPCRequestHandler {
    private let methods: RPCMethodTable
    private let gate: SecretGate
    package let limits: JSONRPCLimits

    package init(
        methods: RPCMethodTable, secret: RPCSecret, limits: JSONRPCLimits = JSONRPCLimits(),
        secretThrottle: SecretThrottle.Policy = SecretThrottle.Policy()
    ) {
        self.init(methods: methods, gate: SecretGate(secret: secret, policy: secretThrottle), limits: limits)
    }

    init(methods: RPCMethodTable, gate: SecretGate, limits: JSONRPCLimits) {
        var table = methods
        let listed = methods.methodNames + Self.systemMethods
        let notifications = methods.notificationNames
        table.register("system.listMethods", secret: .notRequired) { _, _ in .array(listed.map(JSONValue.string)) }
        table.register("system.listNotifications", secret: .notRequired) { _, _ in
            .array(notifications.map(JSONValue.string))
        }
        self.methods = table
        self.gate = gate
        self.limits = limits
    }

    static let multicallName = "system.multicall"
    static let systemMethods = [multicallName, "system.listMethods", "system.listNotifications"]

    package func acceptsSecret(_ candidate: String) async -> Bool {
        await gate.verify(candidate) == .accepted
    }

    package func respond(to body: ByteBuffer, from origin: RPCOrigin) async -> ByteBuffer? {
        guard body.readableBytes <= limits.maxRequestBytes else {
            return encode(Self.response(id: .null, .failure(.invalidRequest(
                "the request is \(body.readableBytes) bytes; the limit is \(limits.maxRequestBytes)"))))
        }
        let shape = JSONNesting.scan(limits.maxNestingDepth, body.readableBytesView)
        guard shape.isWithinDepth else {
            return encode(Self.response(id: .null, .failure(.invalidRequest(
                "arrays and objects nest deeper than \(limits.maxNestingDepth) levels"))))
        }
        // Refused before decoding: a long batch would cost far more to decode than to count.
        if let length = shape.batchLength, length > limits.maxBatchLength {
            return encode(Self.response(id: .null, .failure(.invalidRequest(
                "a batch of \(length) calls; the limit is \(limits.maxBatchLength)"))))
        }
        let parsed = body.withUnsafeReadableBytes { bytes in
            Result { () throws(JSONValueParser.Failure) -> JSONValue in
                try JSONValueParser.parse(bytes, maxDepth: limits.maxNestingDepth)
            }
        }
        guard case .success(let value) = parsed else {
            return encode(Self.response(id: .null, .failure(.parseError())))
        }
        var verdicts: [String: SecretGate.Verdict] = [:]
        guard case .array(let calls) = value else {
            return encode(await answer(value, origin: origin, verdicts: &verdicts))
        }
        // aria2 answers an empty batch with an empty array (JSON-RPC 2.0 would say -32600;
        // front-ends expect aria2's answer).
        guard !calls.isEmpty else { return encode(.array([])) }
        guard calls.count <= limits.maxBatchLength else {
            return encode(Self.response(id: .null, .failure(.invalidRequest(
                "a batch of \(calls.count) calls; the limit is \(limits.maxBatchLength)"))))
        }
        var answers: [JSONValue] = []
        for call in calls {
            answers.append(await answer(call, origin: origin, verdicts: &verdicts))
        }
        return encode(.array(answers))
    }

    /// The response object for one element of a body.
    private func answer(_ element: JSONValue, origin: RPCOrigin, verdicts: inout [String: SecretGate.Verdict]) async -> JSONValue {
        switch JSONRPCRequest.parse(element) {
        case .invalid(let id, let error):
            return Self.response(id: id, .failure(error))
        case .request(let request):
            let result = await call(request.method, request.params, origin: origin, verdicts: &verdicts)
            return Self.response(id: request.id, result)
        }
    }

    /// Runs one call: takes the secret off, checks it where required, and calls the method.
    private func call(
        _ name: String, _ parameters: [JSONValue], origin: RPCOrigin, verdicts: inout [String: SecretGate.Verdict]
    ) async -> Result<JSONValue, JSONRPCError> {
        var parameters = parameters
        var token: String?
        if case .string(let first)? = parameters.first, first.hasPrefix("token:") {
            token = String(first.dropFirst("token:".count))
            parameters.removeFirst()
        }
        if name == Self.multicallName {
            return await multicall(parameters, origin: origin, verdicts: &verdicts)
        }
        guard let method = methods.method(named: name) else { return .failure(.methodNotFound(name)) }
        if method.secret == .required, origin.transport == .tcp {
            guard let token else { return .failure(.unauthorized) }
            let verdict: SecretGate.Verdict
            if let known = verdicts[token] {
                verdict = known
            } else {
                verdict = await gate.verify(token)
                verdicts[token] = verdict
            }
            switch verdict {
            case .accepted: break
            case .rejected: return .failure(.unauthorized)
            case .refused: return .failure(.failed("Unauthorized (too many wrong secrets recently; try again later)"))
            }
        }
        do {
            return .success(try await method.body(RPCParameters(parameters), origin))
        } catch {
            return .failure(error)
        }
    }

    /// aria2's `system.multicall([{methodName, params}, …])`: one result per call, either a
    /// one-element array holding the result or a `{code, message}` fault. Each call carries
    /// its own secret.
    private func multicall(
        _ parameters: [JSONValue], origin: RPCOrigin, verdicts: inout [String: SecretGate.Verdict]
    ) async -> Result<JSONValue, JSONRPCError> {
        let calls: [JSONValue]
        do {
            calls = try RPCParameters(parameters).array(0, "methods")
        } catch {
            return .failure(error)
        }
        guard calls.count <= limits.maxBatchLength else {
            return .failure(.invalidRequest("a multicall of \(calls.count) calls; the limit is \(limits.maxBatchLength)"))
        }
        var results: [JSONValue] = []
        for call in calls {
            guard let object = call.objectValue else {
                results.append(JSONRPCError.failed("system.multicall expected struct.").json)
                continue
            }
            guard let name = object["methodName"]?.stringValue else {
                results.append(JSONRPCError.failed("Missing methodName.").json)
                continue
            }
            guard name != Self.multicallName else {
                results.append(JSONRPCError.failed("Recursive system.multicall forbidden.").json)
                continue
            }
            let nested: [JSONValue]
            switch object["params"] {
            case nil: nested = []
            case .array(let values)?: nested = values
            case .some(let other):
                results.append(JSONRPCError.invalidParams("params of \(name) must be an array, got \(other.kindDescription)").json)
                continue
            }
            switch await self.call(name, nested, origin: origin, verdicts: &verdicts) {
            case .success(let value): results.append(.array([value]))
            case .failure(let error): results.append(error.json)
            }
        }
        return .success(.array(results))
    }

    static func response(id: JSONValue, _ result: Result<JSONValue, JSONRPCError>) -> JSONValue {
        switch result {
        case .success(let value):
            return .object(["jsonrpc": "2.0", "id": id, "result": value])
        case .failure(let error):
            return .object(["jsonrpc": "2.0", "id": id, "error": error.json])
        }
    }

    private func encode(_ value: JSONValue) -> ByteBuffer {
        ByteBuffer(bytes: JSONRPCEncoding.encode(value))
    }
}
