import Foundation
import HaulTestServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The dashboard in headless Chromium, driven as a person would use it (Tests/Browser/
/// dashboard_check.py, over the DevTools protocol on a pipe): a real `haul daemon`, the secret
/// typed in, downloads added from the in-process test server, one paused and resumed, one
/// completed, one failed with its error shown, and a hostile file name shown as text.
///
/// Chromium comes from Debian's `chromium` package, which `.ci/run` installs; without it the
/// test is skipped and says so. With `HAUL_DASHBOARD_SCREENSHOT=PATH` it also saves a
/// screenshot of the page during the batch (bench/dashboard-screenshot.sh).
@Suite struct DashboardBrowserTests {
    static let chromium = ProcessInfo.processInfo.environment["HAUL_CHROMIUM"]
        ?? findExecutable(["chromium", "chromium-browser", "google-chrome"])
    static let python = findExecutable(["python3"])
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/dashboard_check.py").path

    @Test(.enabled(if: chromium != nil, "Chromium was not found on PATH: `apt-get install chromium` (.ci/run installs it)"))
    func dashboardInChromium() async throws {
        let chromium = try #require(Self.chromium)
        let python = try #require(Self.python, "python3 drives Chromium; it was not found on PATH")
        let server = try await TestServer.start()
        let daemon = try await DashboardTestDaemon.start()
        func file(_ name: String, _ query: [String: String]) -> String { server.url("/file/\(name)", query) }
        let hostileName = "<img src=x onerror=window.__haulPwned=1>.bin"
        let slowNames = ["batch-1.iso", "batch-2.iso", "batch-3.iso"]
        var spec: [String: Any] = [
            "chromium": chromium,
            "url": "http://127.0.0.1:\(daemon.port)/",
            "secret": DashboardTestDaemon.secret,
            "slow": slowNames.enumerated().map { n, name in file(name, ["size": "8388608", "seed": "\(n)", "rate": "262144"]) },
            "slowNames": slowNames,
            "more": (4...6).map { n in file("batch-\(n).iso", ["size": "8388608", "seed": "\(n)", "rate": "262144"]) },
            "quick": file("quick.bin", ["size": "200000"]),
            "quickName": "quick.bin",
            "failing": file("missing.bin", ["status": "404"]),
            "failingName": "missing.bin",
            "hostile": file("hostile.bin", ["size": "1000", "disposition": "attachment; filename=\"\(hostileName)\""]),
            "hostileName": hostileName,
        ]
        if let screenshot = ProcessInfo.processInfo.environment["HAUL_DASHBOARD_SCREENSHOT"] { spec["screenshot"] = screenshot }

        let child = try ChildProcess(executable: python, arguments: [Self.driver], input: try JSONSerialization.data(withJSONObject: spec))
        let termination = child.terminationTask()
        let watchdog = child.watchdog(termination, timeout: .seconds(240))
        let errors = Task { var text = Data(); for await chunk in child.stderr { text.append(chunk) }; return String(decoding: text, as: UTF8.self) }
        var steps: [String] = []
        for await line in LineProcess.lines(of: child.stdout) { steps.append(line) }
        let status = await termination.value
        let killed = await watchdog.value
        let stderr = await errors.value
        #expect(!killed, "the browser check did not finish in time; its steps: \(steps)")
        #expect(ChildProcess.exitCode(status) == 0, "the browser check failed:\n\(steps.joined(separator: "\n"))\n\(stderr)")
        #expect(steps.contains("ok: the hostile file name is shown as text"), "\(steps)")
        try await daemon.stop()
        try await server.shutdown()
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
