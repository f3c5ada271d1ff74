import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A JSON-RPC client of a running `haul daemon`, over its unix socket or over TCP.
///
/// `BackgroundSession` and the CLI's client commands (`haul add`, `haul ls`, …) talk to the
/// daemon through it. Each call is one HTTP POST to `/jsonrpc`; the result is decoded into the
/// type the caller asks for, and every failure is a `HaulError`: `.daemonUnavailable` when no
/// daemon answers, `.timeout`, `.rpcError` (or the daemon's own code) when it answers with an
/// error, `.invalidResponse` when the answer cannot be read.
///
/// The client owns a connection pool: call `shutdown()` when done, or use `withRPCClient`.
package final class RPCClient: Sendable {
    /// Limits of one client. Each property's doc comment states its default.
    package struct Configuration: Sendable {
        /// How long one call may take, connecting included. Default: 30 seconds.
        package var timeout: Duration
        /// The largest answer read; a longer one fails with `.invalidResponse` instead of
        /// filling memory. Default: 64 MiB (a `tellStopped` of many thousand downloads fits).
        package var maxResponseBytes: Int

        package init(timeout: Duration = .seconds(30), maxResponseBytes: Int = 64 * 1024 * 1024) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
        }
    }

    /// Where the calls go.
    package let endpoint: DaemonEndpoint
    package let configuration: Configuration
    private let secret: String?
    private let postURL: String
    private let client: HTTPClient

    /// A client of the daemon at `endpoint` (by default the default socket). With a `secret`,
    /// every call carries it as aria2 expects, `"token:SECRET"` as the first parameter; TCP
    /// needs it, the unix socket does not.
    package init(
        endpoint: DaemonEndpoint = .unixSocket(path: DaemonEndpoint.defaultSocketPath),
        secret: String? = nil,
        configuration: Configuration = Configuration()
    ) {
        self.endpoint = endpoint
        self.secret = secret
        self.configuration = configuration
        self.postURL = Self.requestURL(for: endpoint)
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: .seconds(5)),
            decompression: .disabled)
        // Without this AsyncHTTPClient retries a refused connection until the connect timeout:
        // a client must learn at once that no daemon is running (and maybe start one).
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        clientConfiguration.httpVersion = .http1Only
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    /// Closes the client's connections. Calls made afterwards fail.
    package func shutdown() async {
        try? await client.shutdown()
    }

    /// Calls `method` with positional `parameters` and decodes its result as `Result`.
    package func call<Result: Decodable>(
        _ method: String, _ parameters: [RPCParameter] = [], returning: Result.Type = Result.self
    ) async throws(HaulError) -> Result {
        let id = UUID().uuidString
        let body = try encode(JSONRPCCall(id: id, method: method, params: parametersWithSecret(parameters)))
        let (status, answer) = try await post(body)
        return try Self.decode(answer, status: status, expectedID: id, method: method, as: Result.self)
    }

    /// Calls `method` with the given positional parameters and decodes its result as `Result`.
    package func call<Result: Decodable>(
        _ method: String, _ parameters: any Encodable & Sendable..., returning: Result.Type = Result.self
    ) async throws(HaulError) -> Result {
        try await call(method, parameters.map(RPCParameter.init), returning: returning)
    }

    // MARK: Transport

    private func parametersWithSecret(_ parameters: [RPCParameter]) -> [RPCParameter] {
        guard let secret else { return parameters }
        return [RPCParameter("token:" + secret)] + parameters
    }

    private func encode(_ call: JSONRPCCall) throws(HaulError) -> ByteBuffer {
        do {
            return ByteBuffer(bytes: try JSONEncoder().encode(call))
        } catch {
            throw HaulError(.invalidRequest, "cannot encode the parameters of \(call.method): \(error)")
        }
    }

    /// Sends one request body; returns the HTTP status and the whole answer.
    private func post(_ body: ByteBuffer) async throws(HaulError) -> (status: Int, body: ByteBuffer) {
        var request = HTTPClientRequest(url: postURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(body)
        let deadline = NIODeadline.now() + .nanoseconds(configuration.timeout.inNanoseconds)
        do {
            let response = try await client.execute(request, deadline: deadline)
            let answer = try await response.body.collect(upTo: configuration.maxResponseBytes)
            return (Int(response.status.code), answer)
        } catch {
            throw failure(error)
        }
    }

    /// What a transport error means to the caller.
    private func failure(_ error: any Error) -> HaulError {
        if error is CancellationError || (error as? HTTPClientError) == .cancelled || Task.isCancelled {
            return HaulError(.waitCanceled, "the call to the haul daemon was canceled with the task that made it", underlying: error)
        }
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout {
            return HaulError(.timeout, "the haul daemon at \(endpoint) did not answer within \(configuration.timeout)", underlying: error)
        }
        if error is NIOTooManyBytesError {
            return HaulError(.invalidResponse, "the haul daemon's answer is larger than \(configuration.maxResponseBytes) bytes", underlying: error)
        }
        return HaulError(.daemonUnavailable, "cannot reach a haul daemon at \(endpoint) (\(error)); is `haul daemon` running?", underlying: error)
    }

    static func requestURL(for endpoint: DaemonEndpoint) -> String {
        switch endpoint {
        case .unixSocket(let path):
            // AsyncHTTPClient reaches unix sockets through `http+unix://` with the path as host.
            return URL(httpURLWithSocketPath: path, uri: DaemonEndpoint.rpcPath)?.absoluteString
                ?? "http+unix://\(path)\(DaemonEndpoint.rpcPath)"
        case .url(let url):
            return url.absoluteString
        }
    }

    // MARK: Answers

    /// Reads the daemon's answer: its result, its error, or what made it unreadable.
    static func decode<Result: Decodable>(
        _ body: ByteBuffer, status: Int, expectedID: String, method: String, as type: Result.Type
    ) throws(HaulError) -> Result {
        let data = Data(body.readableBytesView)
        let reply: JSONRPCReply<Result>
        do {
            reply = try JSONDecoder().decode(JSONRPCReply<Result>.self, from: data)
        } catch {
            if status != 200 { throw refusal(status: status) }
            throw HaulError(.invalidResponse, "cannot read the haul daemon's answer to \(method): \(error)")
        }
        if let failure = reply.error { throw failure.haulError }
        if status != 200 { throw refusal(status: status) }
        guard reply.id == expectedID else {
            throw HaulError(.invalidResponse, "the haul daemon answered \(method) with the id of another call")
        }
        if let result = reply.result { return result }
        // A call whose result is JSON null (or missing) decodes only into an optional type.
        if let optional = Result.self as? any ExpressibleByNilLiteral.Type,
           let none = optional.init(nilLiteral: ()) as? Result {
            return none
        }
        throw HaulError(.invalidResponse, "the haul daemon's answer to \(method) has no result")
    }

    /// An HTTP refusal without a JSON-RPC error object in it.
    static func refusal(status: Int) -> HaulError {
        let reason = switch status {
        case 413: "the request is larger than the daemon accepts"
        case 401, 403: "the daemon refused the connection"
        default: "the daemon answered HTTP \(status)"
        }
        return HaulError(.rpcError, reason, httpStatus: status)
    }
}

/// Runs `body` with a client of the daemon at `endpoint`, and shuts the client down afterwards.
package func withRPCClient<T>(
    endpoint: DaemonEndpoint = .unixSocket(path: DaemonEndpoint.defaultSocketPath),
    secret: String? = nil,
    configuration: RPCClient.Configuration = RPCClient.Configuration(),
    _ body: (RPCClient) async throws -> T
) async throws -> T {
    let client = RPCClient(endpoint: endpoint, secret: secret, configuration: configuration)
    do {
        let value = try await body(client)
        await client.shutdown()
        return value
    } catch {
        await client.shutdown()
        throw error
    }
}
