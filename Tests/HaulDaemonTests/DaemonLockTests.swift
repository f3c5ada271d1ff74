import Foundation
@testable import HaulDaemon
import HaulTestSupport
import Testing

/// One daemon per state directory and per socket.
@Suite(.timeLimit(.minutes(3))) struct DaemonLockTests {
    /// A held lock refuses a second taker with the holder's PID; released, it can be taken again.
    @Test func lockIsExclusiveUntilReleased() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("daemon.lock")
        let first = try DaemonLock.acquire(at: path, guarding: "the test directory")
        #expect {
            _ = try DaemonLock.acquire(at: path, guarding: "the test directory")
        } throws: { error in
            (error as? DaemonError)?.kind == .alreadyRunning
                && "\(error)".contains("PID \(ProcessInfo.processInfo.processIdentifier)")
                && "\(error)".contains("the test directory")
        }
        first.release()
        // Retried: a child process that another test is spawning at this moment shares every
        // open file description until it execs, this lock's included.
        try await waitUntil("the released lock to be free") {
            guard let second = try? DaemonLock.acquire(at: path, guarding: "the test directory") else { return false }
            second.release()
            return true
        }
        #expect(FileManager.default.fileExists(atPath: path))
    }

    /// A second daemon on the same state directory (another socket) refuses to start and
    /// names the state directory; the first keeps serving.
    @Test func secondDaemonOnStateDirectoryIsRefused() async throws {
        try await withRunningDaemon { daemon in
            let second = Daemon(
                configuration: DaemonConfiguration(
                    socketPath: daemon.directory.path("other/haul.sock"),
                    stateDirectory: daemon.context.configuration.stateDirectory, tcp: nil, handlesTerminationSignals: false),
                makeHandler: { _ in RecordingHandler() })
            await #expect {
                try await second.run()
            } throws: { error in
                (error as? DaemonError)?.kind == .alreadyRunning && "\(error)".contains("the state directory")
            }
            #expect(FileManager.default.fileExists(atPath: daemon.addresses.socketPath))
            let socket = try await ServerTestWebSocket.connect(daemon.socketTarget)
            socket.send("alive")
            #expect(try await socket.next()?.contains("alive") == true)
            await socket.close()
        }
    }

    /// A second daemon on the same socket (another state directory) refuses to start without
    /// touching the first one's socket.
    @Test func secondDaemonOnSocketIsRefused() async throws {
        try await withRunningDaemon { daemon in
            let second = Daemon(
                configuration: DaemonConfiguration(
                    socketPath: daemon.addresses.socketPath,
                    stateDirectory: URL(fileURLWithPath: daemon.directory.path("other-state")), tcp: nil,
                    handlesTerminationSignals: false),
                makeHandler: { _ in RecordingHandler() })
            await #expect {
                try await second.run()
            } throws: { error in
                (error as? DaemonError)?.kind == .alreadyRunning && "\(error)".contains("the socket")
            }
            let socket = try await ServerTestWebSocket.connect(daemon.socketTarget)
            socket.send("alive")
            #expect(try await socket.next()?.contains("alive") == true)
            await socket.close()
        }
    }
}
