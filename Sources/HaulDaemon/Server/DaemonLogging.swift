import Logging

/// The daemon's log: swift-log messages on standard error (the journal, under systemd), from
/// a chosen level up. Quiet by default: Hummingbird reports every listener and connection at
/// `info`, which belongs in a debugging session, not in the journal of every login.
package enum DaemonLogging {
    /// The level names `--log-level` accepts, quietest last.
    package static let levelNames = Logger.Level.allCases.map(\.rawValue)

    /// The level used when none is asked for.
    package static let defaultLevelName = Logger.Level.notice.rawValue

    /// Sends all logging of this process to standard error at `levelName` and above, and
    /// returns the daemon's logger; nil for an unknown level name. Call once per process.
    package static func bootstrap(levelName: String) -> Logger? {
        guard let level = Logger.Level(rawValue: levelName.lowercased()) else { return nil }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "haul.daemon")
        logger.logLevel = level
        return logger
    }
}
