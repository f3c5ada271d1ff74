import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import MetricsTestKit
import Testing

/// The manager's instruments, made with the factory of its configuration: what they say
/// after real downloads, and the arithmetic behind them.
@Suite(.timeLimit(.minutes(2))) struct ManagerMetricsTests {
    typealias Name = ManagerMetrics.Name

    /// A download retried twice and one that fails for good: bytes received are the completed
    /// file's, the retries and the failure (by its code) are counted, each download passed
    /// through the gauge of its states, and after shutdown the gauge holds nothing of them.
    @Test func reportsToTheConfiguredFactory() async throws {
        let metrics = TestMetrics()
        var configuration = Support.fastConfiguration()
        configuration.metricsFactory = metrics
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: configuration) { manager in
                let retried = try await manager.enqueue(Support.request(
                    server, "/file/r.bin", ["status": "503,503,200", "retryAfter": "0", "size": "5000"], in: dir))
                let missing = try await manager.enqueue(Support.request(server, "/file/missing", ["status": "404"], in: dir))
                #expect(try await manager.finished(retried).state == .completed)
                #expect(try await manager.finished(missing).state == .failed)
                #expect(metrics.counterTotal(label: Name.bytesReceived) == 5000)
                #expect(metrics.counterTotal(label: Name.retries) == 2)
                #expect(metrics.counterTotal(label: Name.serverWaits) == 0)
                #expect(metrics.counterTotal(label: Name.finished, dimensions: [("outcome", "completed")]) == 1)
                #expect(metrics.counterTotal(label: Name.finished, dimensions: [("outcome", "failed")]) == 1)
                #expect(metrics.counterTotal(label: Name.failures, dimensions: [("code", "httpStatus")]) == 1)
                #expect(try metrics.expectMeter(Name.downloads, [("state", "completed")]).lastValue == 1)
                #expect(try metrics.expectMeter(Name.downloads, [("state", "failed")]).lastValue == 1)
                // Both went through queued (and running) on the way.
                #expect(try metrics.expectMeter(Name.downloads, [("state", "queued")]).values.max() ?? 0 >= 1)
                #expect(try metrics.expectMeter(Name.downloads, [("state", "running")]).values.max() ?? 0 >= 1)
                #expect(try metrics.expectTimer(Name.storeWrite, [("write", "new")]).values.count == 2)
                #expect(try !metrics.expectTimer(Name.storeWrite, [("write", "batch")]).values.isEmpty)
            }
        }
        for state in DownloadState.allCases {
            #expect(try metrics.expectMeter(Name.downloads, [("state", state.rawValue)]).lastValue ?? 0 == 0, "\(state)")
        }
    }

    /// Bytes are taken once each: a reset to a resume offset (a retry that continues) or to
    /// zero (a restart) neither loses the bytes received before it nor counts the kept
    /// prefix again.
    @Test func receivedBytesSurviveResets() {
        let live = LiveTransfer()
        live.reset(completedBytes: 0, expectedBytes: 100)
        live.add(30)
        #expect(live.takeReceivedBytes() == 30)
        live.add(10)
        // The attempt ends at 40 and the next continues from the 25 that were durable.
        live.reset(completedBytes: 25, expectedBytes: 100)
        live.add(75)
        #expect(live.takeReceivedBytes() == 10 + 75)
        live.reset(completedBytes: 0, expectedBytes: 100)
        live.add(5)
        #expect(live.takeReceivedBytes() == 5)
        #expect(live.takeReceivedBytes() == 0)
    }

    /// The gauge's meters are indexed as `DownloadState.allCases` lists the states.
    @Test func stateIndexFollowsAllCases() {
        for (index, state) in DownloadState.allCases.enumerated() {
            #expect(DownloadStateMeters.index(of: state) == index)
        }
    }
}
