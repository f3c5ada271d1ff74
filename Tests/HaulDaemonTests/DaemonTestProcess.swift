import Foundation
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul daemon` running for real as a child process, with its standard error read line by
/// line (where it prints its ready line and its errors).
final class DaemonTestProcess: Sendable {
    let child: ChildProcess
    private let lines: AsyncStream<String>
    private let termination: Task<Int32, Never>
    private let watchdog: Task<Bool, Never>

    /// Starts `haul daemon ARGUMENTS`; killed if still running after `timeout`. With
    /// `softFileLimit`, it starts with that soft limit on open files (as many systems start
    /// services: 1,024), set by a shell that then becomes the daemon.
    init(_ arguments: [String], timeout: Duration = .seconds(120), softFileLimit: Int? = nil) throws {
        guard let binary = Self.binary else {
            throw ChildProcessError("the haul binary was not found; run `swift build` first (or set HAUL_BINARY)")
        }
        if let softFileLimit {
            child = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "ulimit -Sn \(softFileLimit) && exec \"$0\" \"$@\"", binary, "daemon"] + arguments)
        } else {
            child = try ChildProcess(executable: binary, arguments: ["daemon"] + arguments)
        }
        lines = LineProcess.lines(of: child.stderr)
        // Nothing reads standard output: drain it so that the child never blocks on it.
        let stdout = child.stdout
        Task { for await _ in stdout {} }
        termination = child.terminationTask()
        watchdog = child.watchdog(termination, timeout: timeout)
    }

    /// The ready line's fields (`socket`, `tcp`, `pid`), or nil when the daemon printed
    /// something else first or ended; `lines` collects everything read on the way.
    func waitForReady(timeout: Duration = .seconds(60)) async throws -> (fields: [String: String], lines: [String]) {
        let lines = self.lines
        return try await withTimeLimit("the daemon's ready line", within: timeout) {
            var seen: [String] = []
            for await line in lines {
                seen.append(line)
                if line.hasPrefix("haul daemon: ready ") {
                    return (Self.fields(of: line), seen)
                }
            }
            return ([:], seen)
        }
    }

    /// Every line still to come, until the process closes standard error.
    func remainingLines(timeout: Duration = .seconds(60)) async throws -> [String] {
        let lines = self.lines
        return try await withTimeLimit("the daemon's standard error to end", within: timeout) {
            var seen: [String] = []
            for await line in lines { seen.append(line) }
            return seen
        }
    }

    /// How the process ended: its exit code, or nil (and the signal) when a signal ended it.
    func exit(timeout: Duration = .seconds(60)) async throws -> (code: Int32?, signal: Int32?) {
        let termination = self.termination
        let status = try await withTimeLimit("the daemon to exit", within: timeout) { await termination.value }
        return (ChildProcess.exitCode(status), ChildProcess.terminatingSignal(status))
    }

    func send(_ signal: Int32) {
        child.send(signal)
    }

    /// `key=value` words of a ready line.
    static func fields(of line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }

    /// The `haul` binary: `$HAUL_BINARY`, else the one built beside the tests.
    static let binary: String? = ProcessInfo.processInfo.environment["HAUL_BINARY"] ?? LineProcess.builtProduct("haul")
}
