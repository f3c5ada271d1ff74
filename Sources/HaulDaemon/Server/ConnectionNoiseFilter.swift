import Logging

/// The logger a listener hands to each connection, with one message lowered from `error` to
/// `debug`: HummingbirdWebSocket's "Error handling upgrade result", which it logs whenever a
/// connection ends before its first request was read (a client that connects and goes away, a
/// half-open connection the listener closes, a malformed first request the guard answered).
///
/// Those are the peer's doing, not the daemon's, and a flood of them (10,000 half-open
/// connections logged 9,000 error lines in `bench/abuse.sh`) would fill a disk and hide real
/// errors. Everything else, the request handlers' logs included, passes through unchanged.
struct ConnectionNoiseFilter: LogHandler {
    /// Hummingbird's message for a connection that ended before an HTTP request or upgrade.
    static let upgradeEndedMessage = "Error handling upgrade result"

    var inner: any LogHandler

    /// `logger` with its handler wrapped; its level, metadata and label are kept.
    static func wrapping(_ logger: Logger) -> Logger {
        var filtered = Logger(label: logger.label, factory: { _ in ConnectionNoiseFilter(inner: logger.handler) })
        filtered.logLevel = logger.logLevel
        return filtered
    }

    func log(event: LogEvent) {
        guard event.level == .error, event.message.description == Self.upgradeEndedMessage else {
            inner.log(event: event)
            return
        }
        // Shown, as a debug line, only when the daemon logs at debug level.
        guard inner.logLevel <= .debug else { return }
        var lowered = event
        lowered.level = .debug
        inner.log(event: lowered)
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }
}
