import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Delivers SIGINT/SIGTERM as an async sequence, so `run()` can shut the server down cleanly.
///
/// The default disposition would kill the process mid-write; ignoring the signal and watching it
/// with a dispatch source turns it into an ordinary event instead.
enum TerminationSignals {
    /// Starts catching `numbers` now and yields each one as it arrives.
    static func stream(_ numbers: [Int32]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = numbers.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            }
            let retained = RetainedSources(sources)
            continuation.onTermination = { _ in retained.cancel() }
        }
    }
}

/// Keeps the dispatch sources alive for as long as the stream is, and cancels them at its end.
///
/// Dispatch's source protocols are not marked `Sendable`, but a dispatch source is thread-safe
/// (that is its purpose), and this box only ever calls `cancel()` on them.
private final class RetainedSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    func cancel() {
        for source in self.sources { source.cancel() }
    }
}
