/// Why a test's wait ended without what it waited for; its description names what that was.
public struct WaitFailure: Error, CustomStringConvertible {
    public enum Reason: Sendable {
        /// The time limit passed first.
        case timedOut(after: Duration)
        /// The sequence that should have brought it ended first.
        case ended
    }

    /// What was awaited, as the test said it ("the daemon to stop").
    public let what: String
    public let reason: Reason
    /// What the test added to explain the failure (the state things were in), if anything.
    public let details: String?

    public init(_ what: String, _ reason: Reason, details: String? = nil) {
        self.what = what
        self.reason = reason
        self.details = details
    }

    public var description: String {
        let head = switch reason {
        case .timedOut(let limit): "timed out after \(limit) waiting for \(what)"
        case .ended: "\(what) never came: the sequence ended first"
        }
        return details.map { "\(head); \($0)" } ?? head
    }
}

/// Runs `operation`, failing with `WaitFailure` naming `what` if it has not finished within
/// `limit`: a safety net, so that a broken engine fails its test instead of hanging the suite.
///
/// At the limit the operation is canceled, and this returns once it has ended: an operation
/// that ignores cancellation is left to the suite's `.timeLimit`.
public func withTimeLimit<T: Sendable>(
    _ what: String, within limit: Duration = .seconds(30), _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: TimeLimitOutcome<T>.self) { group in
        group.addTask { .finished(try await operation()) }
        group.addTask {
            try await Task.sleep(for: limit)
            return .timedOut
        }
        defer { group.cancelAll() }
        switch try await group.next() {
        case .finished(let value): return value
        case .timedOut, nil: throw WaitFailure(what, .timedOut(after: limit))
        }
    }
}

/// What finished first in `withTimeLimit`.
private enum TimeLimitOutcome<T: Sendable>: Sendable {
    case finished(T)
    case timedOut
}
