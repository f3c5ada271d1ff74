import AsyncHTTPClient

/// Runs `body` with an HTTP client of its own and shuts the client down afterwards, whether
/// `body` returned or threw: a test that talks to a daemon over plain HTTP.
func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        let value = try await body(client)
        try await client.shutdown()
        return value
    } catch {
        try? await client.shutdown()
        throw error
    }
}
