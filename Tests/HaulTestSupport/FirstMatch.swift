/// The first element of `elements` for which `match` gives a value, and that value: for a test
/// that waits for an event ("the download paused, and why") or a line of output ("ready").
/// Fails with `WaitFailure` naming `what` when the sequence ends first or `limit` passes.
public func firstMatch<Elements: AsyncSequence & Sendable, Match: Sendable>(
    in elements: Elements, _ what: String, within limit: Duration = .seconds(30),
    _ match: @escaping @Sendable (Elements.Element) async throws -> Match?
) async throws -> Match {
    try await withTimeLimit(what, within: limit) {
        for try await element in elements {
            if let value = try await match(element) { return value }
        }
        try Task.checkCancellation()
        throw WaitFailure(what, .ended)
    }
}

/// The first element of `elements` that satisfies `predicate`. Fails with `WaitFailure` naming
/// `what` when the sequence ends first or `limit` passes.
public func firstElement<Elements: AsyncSequence & Sendable>(
    of elements: Elements, _ what: String, within limit: Duration = .seconds(30),
    where predicate: @escaping @Sendable (Elements.Element) async throws -> Bool = { _ in true }
) async throws -> Elements.Element where Elements.Element: Sendable {
    try await firstMatch(in: elements, what, within: limit) { element in
        try await predicate(element) ? element : nil
    }
}
