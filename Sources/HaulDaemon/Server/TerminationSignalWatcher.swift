import Dispatch

/// Turns SIGTERM and SIGINT into a graceful shutdown request, from the moment the daemon starts
/// (before its parts are composed), so that a signal arriving while the sessions are being
/// opened still leads to a clean stop rather than an abrupt one.
final class TerminationSignalWatcher {
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "haul.daemon.signals")

    init(control: DaemonControl) {
        for number in DaemonSystemCalls.terminationSignals {
            DaemonSystemCalls.ignoreDefaultAction(of: number)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { control.requestShutdown() }
            source.resume()
            sources.append(source)
        }
    }

    /// Stops watching; the signals stay ignored until the process exits.
    func stop() {
        for source in sources { source.cancel() }
        sources = []
    }

    deinit { stop() }
}
