import Foundation
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs one of the headless-Chromium checks in Tests/Browser (a Python script that drives
/// Chromium over the DevTools protocol, see devtools.py there): the JSON spec on its standard
/// input, one line per step on its standard output.
///
/// Chromium comes from Debian's `chromium` package, which `scripts/test` installs; tests skip
/// themselves when it is missing (`BrowserCheck.chromium == nil`) and say so.
enum BrowserCheck {
    static let chromium = ProcessInfo.processInfo.environment["HAUL_CHROMIUM"]
        ?? findExecutable(["chromium", "chromium-browser", "google-chrome"])
    static let python = findExecutable(["python3"])
    static let missingChromium: Comment = "Chromium was not found on PATH: `apt-get install chromium` (scripts/test installs it)"

    struct Outcome {
        let steps: [String]
        let exitCode: Int32?
        let killed: Bool
        let stderr: String

        var passed: Bool { !killed && exitCode == 0 }
        var report: String { "\(steps.joined(separator: "\n"))\n\(stderr)" }
    }

    /// Runs Tests/Browser/`script` with `spec` (plus the Chromium path) until it exits, or
    /// kills it after `timeout`.
    static func run(_ script: String, spec: [String: Any], timeout: Duration) async throws -> Outcome {
        let chromium = try #require(chromium)
        let python = try #require(python, "python3 drives Chromium; it was not found on PATH")
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/\(script)").path
        var spec = spec
        spec["chromium"] = chromium
        let child = try ChildProcess(executable: python, arguments: [driver], input: try JSONSerialization.data(withJSONObject: spec))
        let termination = child.terminationTask()
        let watchdog = child.watchdog(termination, timeout: timeout)
        let errors = Task { var text = Data(); for await chunk in child.stderr { text.append(chunk) }; return String(decoding: text, as: UTF8.self) }
        var steps: [String] = []
        for await line in LineProcess.lines(of: child.stdout) { steps.append(line) }
        let status = await termination.value
        let killed = await watchdog.value
        return Outcome(steps: steps, exitCode: ChildProcess.exitCode(status), killed: killed, stderr: await errors.value)
    }

    /// The first of `names` found in a directory of PATH.
    static func findExecutable(_ names: [String]) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for name in names {
            for directory in path.split(separator: ":") {
                let candidate = "\(directory)/\(name)"
                if access(candidate, X_OK) == 0 { return candidate }
            }
        }
        return nil
    }
}
