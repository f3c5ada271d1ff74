import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// The dashboard in headless Chromium, driven as a person would use it (Tests/Browser/
/// dashboard_check.py, over the DevTools protocol on a pipe): a real `haul daemon`, the secret
/// typed in, downloads added from the in-process test server, one paused and resumed, one
/// completed, one failed with its error shown, a hostile file name shown as text, and a
/// playlist added with `haul.addResource` shown as one row.
///
/// Chromium comes from Debian's `chromium` package, which `.ci/run` installs; without it the
/// test is skipped and says so. With `HAUL_DASHBOARD_SCREENSHOT=PATH` it also saves a
/// screenshot of the page during the batch (bench/dashboard-screenshot.sh).
@Suite(.timeLimit(.minutes(5))) struct DashboardBrowserTests {
    @Test(.enabled(if: BrowserCheck.chromium != nil, BrowserCheck.missingChromium))
    func dashboardInChromium() async throws {
        let server = try await TestServer.start()
        // The slow files stop at 1 MiB until the server shuts down (or its hold limit): they
        // stay active through the whole check however slowly it runs, and the daemon waits for
        // their bytes longer than the check takes rather than retrying them (shown as waiting).
        let daemon = try await DashboardTestDaemon.start(extraArguments: ["--timeout", "300"])
        let slowFile = ["size": "8388608", "rate": "262144", "hold": "1048576"]
        func file(_ name: String, _ query: [String: String]) -> String { server.url("/file/\(name)", query) }
        let hostileName = "<img src=x onerror=window.__haulPwned=1>.bin"
        let slowNames = ["batch-1.iso", "batch-2.iso", "batch-3.iso"]
        var spec: [String: Any] = [
            "url": "http://127.0.0.1:\(daemon.port)/",
            "secret": DashboardTestDaemon.secret,
            "slow": slowNames.enumerated().map { n, name in file(name, slowFile.merging(["seed": "\(n)"]) { $1 }) },
            "slowNames": slowNames,
            "more": (4...6).map { n in file("batch-\(n).iso", slowFile.merging(["seed": "\(n)"]) { $1 }) },
            "quick": file("quick.bin", ["size": "200000"]),
            "quickName": "quick.bin",
            "failing": file("missing.bin", ["status": "404"]),
            "failingName": "missing.bin",
            "hostile": file("hostile.bin", ["size": "1000", "disposition": "attachment; filename=\"\(hostileName)\""]),
            "hostileName": hostileName,
            // An ended playlist of three segments (the test server's /live with all of them out).
            "resource": server.url("/live", ["key": "show", "segments": "s0.ts:1,s1.ts:1,s2.ts:1", "base": server.url("/file/"), "start": "3"]),
            "resourceName": "live",
            "segmentNames": ["s0.ts", "s1.ts", "s2.ts"],
        ]
        if let screenshot = ProcessInfo.processInfo.environment["HAUL_DASHBOARD_SCREENSHOT"] { spec["screenshot"] = screenshot }

        let outcome = try await BrowserCheck.run("dashboard_check.py", spec: spec, timeout: .seconds(240))
        #expect(!outcome.killed, "the browser check did not finish in time; its steps: \(outcome.steps)")
        #expect(outcome.passed, "the browser check failed:\n\(outcome.report)")
        #expect(outcome.steps.contains("ok: the hostile file name is shown as text"), "\(outcome.steps)")
        try await daemon.stop()
        try await server.shutdown()
    }
}
