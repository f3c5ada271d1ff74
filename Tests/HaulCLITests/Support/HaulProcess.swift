import Foundation
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `haul` binary running as a child process, with its output captured line by line.
///
/// Every process has a watchdog: if it is still running after `timeout`, it is killed, which
/// ends its output and so every wait on it. A hung run fails its test instead of the suite.
final class HaulProcess: Sendable {
    /// How a run ended.
    struct Result: Sendable {
        /// The exit status, or the signal number when `signaled`.
        let status: Int32
        /// True when the process was killed by a signal it did not handle.
        let signaled: Bool
        let stdout: String
        let stderr: String
        let stdoutLines: [String]
        /// True when the watchdog had to kill it.
        let timedOut: Bool
    }

    let stdout = ProcessOutput()
    let stderr = ProcessOutput()
    private let child: ChildProcess
    private let termination: Task<Int32, Never>
    private let drained: Task<Void, Never>
    private let watchdog: Task<Bool, Never>

    /// Starts `haul ARGUMENTS` in `directory`, with `input` (if any) as its standard input.
    ///
    /// With `inTerminal`, haul runs inside `script(1)`, which gives it a pseudo-terminal as
    /// stdout, so that the live progress display is what gets tested.
    init(
        _ arguments: [String], in directory: URL, input: String? = nil, inTerminal: Bool = false,
        timeout: Duration = .seconds(60), environment: [String: String] = [:]
    ) throws {
        guard let binary = HaulBinary.url else {
            throw HaulProcessError("the haul binary was not found; run `swift build --product haul` (or set HAUL_BINARY)")
        }
        var executable = binary.path
        var arguments = arguments
        if arguments.first == "get", !arguments.contains("--state-dir") {
            // Each test's runs share a store of their own, beside (not in) its directory, so
            // that a re-run continues and nothing leaks into the user's ~/.local/state.
            arguments.insert(contentsOf: ["--state-dir", directory.path + ".haul-state"], at: 1)
        }
        var argumentsToPass = arguments
        if inTerminal {
            executable = Self.scriptPath
            let command = ([binary.path] + arguments).map(Self.shellQuoted).joined(separator: " ")
            // -q: no banner, -f: flush at once, -e: exit with the command's status.
            argumentsToPass = ["-qfec", command, "/dev/null"]
        }
        let child = try ChildProcess(
            executable: executable, arguments: argumentsToPass, directory: directory.path, input: input.map { Data($0.utf8) },
            environment: environment)
        self.child = child
        let stdout = self.stdout
        let stderr = self.stderr
        let termination = child.terminationTask()
        self.termination = termination
        self.drained = Task {
            async let out: Void = stdout.read(child.stdout)
            async let err: Void = stderr.read(child.stderr)
            _ = await (out, err)
        }
        self.watchdog = child.watchdog(termination, timeout: timeout)
    }

    /// Runs `haul ARGUMENTS` to the end.
    static func run(
        _ arguments: [String], in directory: URL, input: String? = nil, inTerminal: Bool = false, environment: [String: String] = [:]
    ) async throws -> Result {
        try await HaulProcess(arguments, in: directory, input: input, inTerminal: inTerminal, environment: environment).result()
    }

    /// util-linux `script`, which the terminal tests need (its options differ on macOS).
    static let scriptPath = "/usr/bin/script"
    static var canRunInTerminal: Bool {
        #if os(Linux)
        FileManager.default.isExecutableFile(atPath: scriptPath)
        #else
        false
        #endif
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Sends `signal` (SIGINT, SIGTERM, SIGKILL…) to the process.
    func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits for the process to exit and its output to be read to the end.
    func result() async -> Result {
        let status = await termination.value
        await drained.value
        let timedOut = await watchdog.value
        let signal = ChildProcess.terminatingSignal(status)
        return Result(
            status: signal ?? ChildProcess.exitCode(status) ?? -1,
            signaled: signal != nil,
            stdout: await stdout.text,
            stderr: await stderr.text,
            stdoutLines: await stdout.lines,
            timedOut: timedOut)
    }
}

struct HaulProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
