import Foundation
import HaulTestServer
import Testing

/// A web page of another origin drives a real `haul daemon --rpc-allow-origin-all` from
/// headless Chromium, as aria2's browser front-ends do (Tests/Browser/rpc_page_check.py):
/// `fetch` POST (with its CORS preflight), `fetch` GET with base64 params, JSONP through a
/// script tag, and a WebSocket that adds a download from the in-process test server and
/// receives its notifications. The page's results are read back over the DevTools protocol.
@Suite(.timeLimit(.minutes(5))) struct RPCBrowserPageTests {
    @Test(.enabled(if: BrowserCheck.chromium != nil, BrowserCheck.missingChromium))
    func pageOfAnotherOriginDrivesTheDaemon() async throws {
        let server = try await TestServer.start()
        let daemon = try await DashboardTestDaemon.start(extraArguments: ["--rpc-allow-origin-all"])
        let spec: [String: Any] = [
            "port": daemon.port,
            "secret": DashboardTestDaemon.secret,
            "file": server.url("/file/from-page.bin", ["size": "300000"]),
            "fileName": "from-page.bin",
        ]
        let outcome = try await BrowserCheck.run("rpc_page_check.py", spec: spec, timeout: .seconds(180))
        #expect(!outcome.killed, "the browser check did not finish in time; its steps: \(outcome.steps)")
        #expect(outcome.passed, "the browser check failed:\n\(outcome.report)")
        #expect(outcome.steps.contains("ok: the WebSocket receives onDownloadComplete for it"), "\(outcome.steps)")
        #expect(outcome.steps.contains("ok: no console errors (no CORS refusals)"), "\(outcome.steps)")
        try await daemon.stop()
        try await server.shutdown()
    }
}
