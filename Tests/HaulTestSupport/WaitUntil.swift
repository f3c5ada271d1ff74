/// Checks `condition` until it holds, for a state that no event announces (a server accepting
/// connections, a status a daemon reports). Fails with `WaitFailure` naming `what` (and, when
/// given, what `explaining` says of the state then) if it does not hold within `limit`.
///
/// The first check is immediate; the pauses between checks start at 5 ms and double up to
/// `maxInterval`, short enough not to slow a test down and long enough not to spin on two
/// cores. They only space the checks: what the test waits for is the condition.
public func waitUntil(
    _ what: String, within limit: Duration = .seconds(30), maxInterval: Duration = .milliseconds(100),
    isolation: isolated (any Actor)? = #isolation,
    explaining: (() async -> String)? = nil,
    _ condition: () async throws -> Bool
) async throws {
    _ = try await waitForValue(what, within: limit, maxInterval: maxInterval, explaining: explaining) {
        try await condition() ? true : nil
    }
}

/// Checks `produce` until it gives a value, and returns that value; like `waitUntil`, for a
/// state read together with what the test needs from it.
public func waitForValue<T>(
    _ what: String, within limit: Duration = .seconds(30), maxInterval: Duration = .milliseconds(100),
    isolation: isolated (any Actor)? = #isolation,
    explaining: (() async -> String)? = nil,
    _ produce: () async throws -> T?
) async throws -> T {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    var interval = Duration.milliseconds(5)
    while true {
        if let value = try await produce() { return value }
        let now = clock.now
        guard now < deadline else {
            throw WaitFailure(what, .timedOut(after: limit), details: await explaining?())
        }
        try await Task.sleep(for: min(interval, now.duration(to: deadline)))
        interval = min(interval * 2, maxInterval)
    }
}
