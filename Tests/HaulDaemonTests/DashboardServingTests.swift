import Foundation
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// The web dashboard's files as a real `haul daemon` serves them, on TCP and on the unix
/// socket, and `haul.overview` and `haul.groupProgress`, the methods added for it.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DashboardServingTests {
    /// `/` is the HTML page with the Content-Security-Policy that forbids inline scripts and
    /// other origins, on both listeners; every script and the style sheet come with their
    /// content types and the same policy.
    @Test func servesPageAndFilesWithPolicy() async throws {
        let daemon = try await DashboardTestDaemon.start()
        for overSocket in [false, true] {
            let page = try await daemon.get("/", overSocket: overSocket)
            #expect(page.status == 200)
            #expect(page.headers.first(name: "content-type") == "text/html; charset=utf-8")
            let policy = try #require(page.headers.first(name: "content-security-policy"))
            #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"))
            #expect(!policy.contains("unsafe"), "\(policy)")
            #expect(page.headers.first(name: "x-content-type-options") == "nosniff")
            #expect(page.body.hasPrefix("<!doctype html>"))
            #expect(page.body.contains(#"<script src="/dashboard/app.js" defer></script>"#))
            // No inline script: every <script> tag loads a file.
            #expect(page.body.components(separatedBy: "<script").dropFirst().allSatisfy { $0.hasPrefix(" src=\"/dashboard/") })
            #expect(!page.body.contains("style="), "an inline style in the page")
            #expect(page.body.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "an inline event handler in the page")
            #expect(!page.body.contains(DashboardTestDaemon.secret))

            let script = try await daemon.get("/dashboard/app.js", overSocket: overSocket)
            #expect(script.status == 200)
            #expect(script.headers.first(name: "content-type") == "text/javascript; charset=utf-8")
            #expect(script.headers.first(name: "content-security-policy") == policy)
            #expect(script.body.contains("sessionStorage"))
        }
        for asset in DashboardAsset.all {
            let answer = try await daemon.get(asset.path)
            #expect(answer.status == 200, "\(asset.path)")
            #expect(answer.headers.first(name: "content-type") == asset.contentType, "\(asset.path)")
            #expect(answer.body == String(buffer: asset.body), "\(asset.path)")
        }
        #expect(try await daemon.get("/dashboard/missing.js").status == 404)
        try await daemon.stop()
    }

    /// The scripts never turn text into markup: no innerHTML, outerHTML, insertAdjacentHTML,
    /// document.write or eval anywhere in them.
    @Test func scriptsInsertTextOnly() {
        let forbidden = ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"]
        for asset in DashboardAsset.all where asset.contentType.hasPrefix("text/javascript") {
            let text = String(buffer: asset.body)
            for word in forbidden {
                #expect(!text.contains(word), "\(asset.path) uses \(word)")
            }
        }
    }

    /// `haul.overview` needs the secret like every method, and answers a session's totals and
    /// one window of its downloads.
    @Test func overviewIsBoundedAndNeedsTheSecret() async throws {
        let daemon = try await DashboardTestDaemon.start()
        let refused = try await daemon.call("haul.overview", ["daemon"], secret: nil)
        #expect((refused["error"] as? [String: Any])?["message"] as? String == "Unauthorized")
        for n in 0..<3 {
            let added = try await daemon.call("aria2.addUri", [["http://127.0.0.1:9/\(n).bin"], ["pause": "true"]])
            #expect(added["result"] is String, "\(added)")
        }
        let answer = try await daemon.call("haul.overview", ["daemon", 1, 1])
        let overview = try #require(answer["result"] as? [String: Any], "\(answer)")
        #expect(overview["session"] as? String == "daemon")
        #expect(overview["total"] as? Int == 3)
        #expect((overview["states"] as? [String: Any])?["paused"] as? Int == 3)
        #expect(overview["offset"] as? Int == 1)
        let window = try #require(overview["downloads"] as? [[String: Any]])
        #expect(window.count == 1)
        #expect(((window.first?["request"] as? [String: Any])?["url"] as? String) == "http://127.0.0.1:9/1.bin")
        let unknown = try await daemon.call("haul.overview", ["no-such-session"])
        #expect((unknown["error"] as? [String: Any])?["message"] as? String == "no open session named 'no-such-session'")
        try await daemon.stop()
    }
    /// A resource added with `haul.addResource` is one group: its files carry `haulResource`
    /// (the group and the document) when asked for, plain aria2 answers do not, and
    /// `haul.groupProgress` gives the group's files done/total and bytes for the dashboard's
    /// single row.
    @Test func resourceFilesNameTheirGroup() async throws {
        let daemon = try await DashboardTestDaemon.start()
        try await withTestServer { server in
            let source = server.url("/live", ["key": "res", "segments": "s0.ts:1,s1.ts:1,s2.ts:1", "base": server.url("/file/"), "start": "3"])
            let added = try await daemon.call("haul.addResource", ["daemon", "show", source, ["kind": "hls", "directory": "show"]])
            #expect((added["result"] as? [String: Any])?["files"] as? Int == 3, "\(added)")
            let plain = try await daemon.call("aria2.addUri", [[server.url("/file/plain.bin", ["size": "1000"])]])
            #expect(plain["result"] is String, "\(plain)")
            let stopped = try await waitForValue("the four downloads to complete") { () async throws -> [[String: Any]]? in
                let answer = try await daemon.call("aria2.tellStopped", [0, 10, ["gid", "status", "totalLength", "haulResource"]])
                let entries = answer["result"] as? [[String: Any]] ?? []
                return entries.count == 4 && entries.allSatisfy({ $0["status"] as? String == "complete" }) ? entries : nil
            }
            let members = stopped.compactMap { $0["haulResource"] as? [String: Any] }
            #expect(members.count == 3)
            #expect(members.allSatisfy { $0["group"] as? String == "show" && $0["source"] as? String == source }, "\(members)")
            let full = try await daemon.call("aria2.tellStopped", [0, 10])
            #expect((full["result"] as? [[String: Any]] ?? []).allSatisfy { $0["haulResource"] == nil }, "aria2's answer without keys has Haul's key")
            let bytes = stopped.filter { $0["haulResource"] != nil }.reduce(0) { $0 + (Int($1["totalLength"] as? String ?? "") ?? 0) }
            let answer = try await daemon.call("haul.groupProgress", ["daemon", ["show", "no-such-group"]])
            let groups = try #require(answer["result"] as? [[String: Any]], "\(answer)")
            #expect(groups.count == 1)
            let group = try #require(groups.first)
            #expect(group["name"] as? String == "show")
            #expect(group["total"] as? Int == 3 && group["completed"] as? Int == 3 && group["failed"] as? Int == 0, "\(group)")
            #expect(bytes > 0 && group["completedBytes"] as? Int == bytes && group["expectedBytes"] as? Int == bytes, "\(group), \(bytes)")
        }
        try await daemon.stop()
    }
}
