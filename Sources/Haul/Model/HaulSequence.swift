/// An asynchronous sequence whose iteration throws only `HaulError`: the events of a session,
/// the results of a group.
///
/// It ends when what it follows is over (a group's last member finished, the session closed)
/// or when the iterating task is canceled. A background session's sequences wait out a daemon
/// that restarts; they throw when the daemon cannot be reached again
/// (`HaulError.Code.daemonUnavailable`).
public struct HaulSequence<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = HaulError

    private let stream: AsyncThrowingStream<Element, any Error>

    package init(_ stream: AsyncThrowingStream<Element, any Error>) {
        self.stream = stream
    }

    /// A sequence and the continuation that feeds it; `onTermination` runs when the consumer
    /// stops iterating (or the sequence finishes).
    package static func make(
        onTermination: @escaping @Sendable () -> Void = {}
    ) -> (sequence: HaulSequence, continuation: AsyncThrowingStream<Element, any Error>.Continuation) {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { _ in onTermination() }
        return (HaulSequence(stream), continuation)
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// Iterates a `HaulSequence`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator

        /// The next element, or nil at the end.
        public mutating func next() async throws(HaulError) -> Element? {
            do {
                return try await base.next()
            } catch {
                throw HaulError.from(error)
            }
        }

        /// The next element, or nil at the end.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(HaulError) -> Element? {
            do {
                return try await base.next(isolation: actor)
            } catch {
                throw HaulError.from(error)
            }
        }
    }
}

extension HaulError {
    /// `error` itself when it is a `HaulError`, else an error of `fallback` that keeps it as
    /// its cause.
    package static func from(_ error: any Error, fallback: Code = .invalidState) -> HaulError {
        if let error = error as? HaulError { return error }
        if error is CancellationError { return HaulError(.waitCanceled, "the waiting task was canceled", underlying: error) }
        return HaulError(fallback, "\(error)", underlying: error)
    }
}
