import Logging
import Synchronization
import Testing
@testable import HaulDaemon

/// The connection logger's filter, without a daemon: only HummingbirdWebSocket's message for a
/// connection that ended before its first request is lowered; everything else passes.
@Suite struct ConnectionNoiseFilterTests {
    /// Keeps what reaches it.
    struct Recorder: LogHandler {
        let box: Box
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            box.seen.withLock { $0.append((event.level, event.message.description)) }
        }
    }

    final class Box: Sendable {
        let seen = Mutex<[(Logger.Level, String)]>([])
    }

    func logger(at level: Logger.Level, into box: Box) -> Logger {
        var logger = Logger(label: "test") { _ in Recorder(box: box, logLevel: level) }
        logger.logLevel = level
        return ConnectionNoiseFilter.wrapping(logger)
    }

    @Test func anEndedConnectionIsNotAnError() {
        let box = Box()
        let logger = logger(at: .info, into: box)
        logger.error("Error handling upgrade result", metadata: ["error.type": "closed"])
        logger.error("something else failed")
        logger.warning("refused a unix-socket client of another user")
        let seen = box.seen.withLock { $0.map { "\($0.0) \($0.1)" } }
        #expect(seen == ["error something else failed", "warning refused a unix-socket client of another user"])
    }

    @Test func shownAsDebugWhenTheDaemonLogsAtDebug() {
        let box = Box()
        let logger = logger(at: .debug, into: box)
        logger.error("Error handling upgrade result")
        let seen = box.seen.withLock { $0.map { "\($0.0) \($0.1)" } }
        #expect(seen == ["debug Error handling upgrade result"])
        #expect(logger.logLevel == .debug && logger.label == "test")
    }
}
