import AsyncHTTPClient
import HaulTestServer

/// One response as the tests inspect it: head, the body bytes that arrived, and how the body
/// ended. A dropped connection is not an error of `fetch` itself: it shows up as `bodyError`
/// next to the bytes received before it, which is exactly what drop tests assert on.
struct Fetched: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    var bodyError: (any Error)?

    /// First value of header `name`, case-insensitively.
    func header(_ name: String) -> String? {
        self.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// All values of header `name`, case-insensitively.
    func headers(_ name: String) -> [String] {
        self.headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
    }
}

extension HTTPClient {
    /// Sends one request and reads the whole body, recording rather than throwing body errors.
    func fetch(_ url: String, method: String = "GET", headers: [(String, String)] = []) async throws -> Fetched {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        let response = try await self.execute(request, timeout: .seconds(30))
        var fetched = Fetched(status: Int(response.status.code), headers: Array(response.headers), body: [], bodyError: nil)
        do {
            for try await chunk in response.body {
                fetched.body.append(contentsOf: chunk.readableBytesView)
            }
        } catch {
            fetched.bodyError = error
        }
        return fetched
    }
}

/// Runs `body` against a fresh server on a random port and a client that never follows
/// redirects (tests look at each hop), shutting both down afterwards whatever happens.
func withServerAndClient<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestServer, HTTPClient) async throws -> T
) async throws -> T {
    try await withTestServer { server in
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(redirectConfiguration: .disallow)
        )
        let result: T
        do {
            result = try await body(server, client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return result
    }
}

extension [UInt8] {
    /// Whether these bytes are exactly the test content for `seed` at `range`.
    ///
    /// A Bool rather than an array comparison so a failing expectation does not print megabytes.
    func isContent(seed: UInt64, range: Range<Int>) -> Bool {
        self.count == range.count && self == TestContent.bytes(seed: seed, range: range)
    }

    /// Whether these bytes are exactly the first `size` bytes of the test content for `seed`.
    func isContent(seed: UInt64, size: Int) -> Bool {
        self.isContent(seed: seed, range: 0..<size)
    }
}
