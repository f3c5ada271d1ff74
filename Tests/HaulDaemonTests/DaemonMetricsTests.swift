import AsyncHTTPClient
import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// `GET /metrics` of a real `haul daemon`: Prometheus text that says what the daemon did.
@Suite(.timeLimit(.minutes(3))) struct DaemonMetricsTests {
    /// After a few downloads from the test server, the scraped text parses whole as Prometheus
    /// text; bytes received equal the bytes the server sent, and the completed downloads are
    /// counted by the finished counter and by the gauge of downloads by state.
    @Test func scrapeCountsDownloads() async throws {
        let daemon = try await DashboardTestDaemon.start()
        let sizes = ["a.bin": 1_000, "b.bin": 70_000, "c.bin": 300_000]
        let sent = try await withTestServer { server in
            for (name, size) in sizes.sorted(by: { $0.key < $1.key }) {
                let added = try await daemon.call("aria2.addUri", [[server.url("/file/\(name)", ["size": "\(size)"])]])
                #expect(added["result"] is String, "\(added)")
            }
            try await waitUntil("the three downloads to complete") {
                let answer = try await daemon.call("aria2.tellStopped", [0, 10, ["status"]])
                let entries = answer["result"] as? [[String: Any]] ?? []
                return entries.count == 3 && entries.allSatisfy { $0["status"] as? String == "complete" }
            }
            return sizes.keys.reduce(0) { $0 + server.bytesSent(forKey: "/file/\($1)") }
        }
        #expect(sent == sizes.values.reduce(0, +))

        let scraped = try await daemon.get("/metrics", overSocket: true)
        #expect(scraped.status == 200)
        #expect(scraped.headers["content-type"].first == "text/plain; version=0.0.4; charset=utf-8")
        let text = try PrometheusText(parsing: scraped.body)
        let fleetOnly = [ManagerMetrics.Name.takeovers, ManagerMetrics.Name.leasesLost]
        for name in fleetOnly {
            #expect(text.types[name] == nil, "\(name) is a fleet member's only")
        }
        for name in ManagerMetrics.Name.help.keys where name != ManagerMetrics.Name.failures && !fleetOnly.contains(name) {
            #expect(text.help[name] == ManagerMetrics.Name.help[name], "\(name)")
        }
        #expect(text.types[ManagerMetrics.Name.bytesReceived] == "counter")
        #expect(text.value(ManagerMetrics.Name.bytesReceived) == Double(sent), "\(scraped.body)")
        #expect(text.types[ManagerMetrics.Name.finished] == "counter")
        #expect(text.value(ManagerMetrics.Name.finished, ["outcome": "completed"]) == 3)
        #expect(text.value(ManagerMetrics.Name.finished, ["outcome": "failed"]) == 0)
        #expect(text.types[ManagerMetrics.Name.downloads] == "gauge")
        #expect(text.value(ManagerMetrics.Name.downloads, ["state": "completed"]) == 3)
        #expect(text.value(ManagerMetrics.Name.downloads, ["state": "running"]) == 0)
        #expect(text.value(ManagerMetrics.Name.downloads, ["state": "queued"]) == 0)
        #expect(text.value(ManagerMetrics.Name.retries) == 0)
        // New rows, then at least one batch of state changes, each timed once.
        #expect(text.types[ManagerMetrics.Name.storeWrite] == "histogram")
        #expect((text.value(ManagerMetrics.Name.storeWrite + "_count", ["write": "new"]) ?? 0) >= 3)
        #expect((text.value(ManagerMetrics.Name.storeWrite + "_count", ["write": "batch"]) ?? 0) >= 1)
        try await daemon.stop()
    }

    /// Over TCP, `/metrics` needs the RPC secret as a bearer token: none or a wrong one gets
    /// 401 and no figures; the right one gets the same text as the trusted unix socket.
    @Test func tcpNeedsTheSecret() async throws {
        let daemon = try await DashboardTestDaemon.start()
        let bare = try await scrape(daemon, authorization: nil)
        #expect(bare.status == 401)
        #expect(bare.headers["www-authenticate"].first?.hasPrefix("Bearer") == true)
        #expect(!bare.body.contains("haul_"))
        #expect(try await scrape(daemon, authorization: "Bearer not-the-secret").status == 401)
        #expect(try await scrape(daemon, authorization: "Basic \(DashboardTestDaemon.secret)").status == 401)
        let granted = try await scrape(daemon, authorization: "Bearer \(DashboardTestDaemon.secret)")
        #expect(granted.status == 200)
        let text = try PrometheusText(parsing: granted.body)
        #expect(text.value(ManagerMetrics.Name.bytesReceived) == 0)
        #expect(text.value(ManagerMetrics.Name.downloads, ["state": "queued"]) == 0)
        #expect(try await daemon.get("/metrics", overSocket: true).status == 200)
        try await daemon.stop()
    }

    private func scrape(_ daemon: DashboardTestDaemon, authorization: String?) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        try await withHTTPClient { client in
            var request = HTTPClientRequest(url: daemon.url("/metrics"))
            if let authorization { request.headers.add(name: "Authorization", value: authorization) }
            let response = try await client.execute(request, timeout: .seconds(20))
            let body = try await response.body.collect(upTo: 4 << 20)
            return (Int(response.status.code), response.headers, String(buffer: body))
        }
    }
}

/// The pieces of `/metrics` that need no daemon: the bearer token, and the strict reader the
/// daemon tests trust.
@Suite struct MetricsTextTests {
    /// Only `Bearer TOKEN` (the scheme in any case) yields a token.
    @Test func bearerToken() {
        #expect(MetricsEndpoint.bearerToken("Bearer abc") == "abc")
        #expect(MetricsEndpoint.bearerToken("bearer  abc ") == "abc")
        #expect(MetricsEndpoint.bearerToken("Basic abc") == nil)
        #expect(MetricsEndpoint.bearerToken("Bearer") == nil)
        #expect(MetricsEndpoint.bearerToken("Bearer ") == nil)
        #expect(MetricsEndpoint.bearerToken(nil) == nil)
    }

    /// Well-formed text is read, labels unescaped, a histogram's series under its family.
    @Test func readsWellFormedText() throws {
        let text = try PrometheusText(parsing: """
            # HELP a_total Things.
            # TYPE a_total counter
            a_total{kind="x\\"y",other="1\\n"} 3
            # TYPE h histogram
            h_bucket{le="0.5"} 1
            h_bucket{le="+Inf"} 2
            h_sum 0.75
            h_count 2 1700000000000

            """)
        #expect(text.value("a_total", ["kind": "x\"y", "other": "1\n"]) == 3)
        #expect(text.help["a_total"] == "Things.")
        #expect(text.value("h_bucket", ["le": "+Inf"]) == 2)
        #expect(text.value("h_count") == 2)
        #expect(text.samples.count == 5)
    }

    /// What Prometheus would refuse is refused: an undeclared family, a bad value, a bad
    /// label or timestamp, an unknown type, a bucket without `le`, a second TYPE, a missing
    /// final newline, a bad name.
    @Test(arguments: [
        "x 1\n",
        "# TYPE x gauge\nx one\n",
        "# TYPE x gauge\nx inf\n",
        "# TYPE x gauge\nx{a=\"1\" 1\n",
        "# TYPE x gauge\nx{a=1} 1\n",
        "# TYPE x gauge\nx{a=\"1\",a=\"2\"} 1\n",
        "# TYPE x gauge\nx 1 2 3\n",
        "# TYPE x frobnicator\nx 1\n",
        "# TYPE h histogram\nh_bucket 1\n",
        "# TYPE x gauge\n# TYPE x gauge\nx 1\n",
        "# TYPE x gauge\nx 1",
        "# TYPE 1x gauge\n",
    ])
    func refusesMalformedText(_ body: String) {
        #expect(throws: PrometheusText.Malformed.self) { try PrometheusText(parsing: body) }
    }
}
