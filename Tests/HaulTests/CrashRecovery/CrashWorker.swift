import Foundation
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of the `HaulCrashWorker` executable on a batch spec, with its output captured line
/// by line and a watchdog: if the run is still going after `timeout`, it is killed, which ends
/// its output and so every wait on it. A hung worker fails the test instead of hanging it.
final class CrashWorker: Sendable {
    /// How a run ended.
    struct Result: Sendable {
        /// The exit code, or nil when a signal ended the run.
        let exitCode: Int32?
        /// The signal that ended the run, if one did.
        let signal: Int32?
        let lines: [String]
        let stderr: String
        /// True when the watchdog had to kill it (not when the run ended just as time ran out).
        let timedOut: Bool
    }

    let stdout = ProcessOutput()
    let stderr = ProcessOutput()
    private let child: ChildProcess
    private let termination: Task<Int32, Never>
    private let drained: Task<Void, Never>
    private let watchdog: Task<Bool, Never>

    init(spec: URL, timeout: Duration) throws {
        guard let binary = Self.binary else {
            throw TestFailure("HaulCrashWorker was not found; run `swift build --build-tests` (or set HAUL_CRASH_WORKER)")
        }
        let child = try ChildProcess(executable: binary.path, arguments: [spec.path])
        self.child = child
        let termination = child.terminationTask()
        self.termination = termination
        let stdout = self.stdout
        let stderr = self.stderr
        self.drained = Task {
            async let out: Void = stdout.read(child.stdout)
            async let err: Void = stderr.read(child.stderr)
            _ = await (out, err)
        }
        self.watchdog = child.watchdog(termination, timeout: timeout)
    }

    /// kill -9: no handler runs, nothing is flushed, exactly like a crash.
    func kill() {
        child.send(SIGKILL)
    }

    /// Waits for the run to end and its output to be read to the end.
    func result() async -> Result {
        let status = await termination.value
        await drained.value
        let signal = ChildProcess.terminatingSignal(status)
        return Result(
            exitCode: ChildProcess.exitCode(status),
            signal: signal,
            lines: await stdout.lines,
            stderr: await stderr.text,
            timedOut: await watchdog.value && signal == SIGKILL)
    }

    /// `swift build --build-tests` puts the worker beside the test runner
    /// (`.build/<triple>/debug/`); `HAUL_CRASH_WORKER` overrides that, and walking up from this
    /// file to `.build/debug/` covers runners started from elsewhere.
    static let binary: URL? = {
        if let override = ProcessInfo.processInfo.environment["HAUL_CRASH_WORKER"] {
            return URL(fileURLWithPath: override)
        }
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // The runner is `…/debug/HaulPackageTests.xctest` (a file on Linux, a bundle on macOS,
        // where the binary sits at `….xctest/Contents/MacOS/…`).
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("HaulCrashWorker"))
            directory = directory.deletingLastPathComponent()
        }
        var packageRoot = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { packageRoot = packageRoot.deletingLastPathComponent() }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/HaulCrashWorker"))
        return candidates.first { candidate in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory)
                && !isDirectory.boolValue && FileManager.default.isExecutableFile(atPath: candidate.path)
        }
    }()
}
