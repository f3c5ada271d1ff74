import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT and SIGTERM into calls the run loop handles, instead of letting them kill the
/// process: an interrupted `haul get` must stop its transfers through
/// `DownloadManager.shutdown()`, which checkpoints them, so that the next run continues.
///
/// The default action is switched off first (`SIG_IGN`); Dispatch still sees the signals and
/// calls `handler` on its own queue.
final class SignalWatcher {
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "haul.signals")

    init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
    }

    /// Stops watching; the signals stay ignored until the process exits moments later.
    func stop() {
        for source in sources { source.cancel() }
        sources = []
    }

    deinit { stop() }
}
