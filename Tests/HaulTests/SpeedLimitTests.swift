import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import NIOConcurrencyHelpers
import Testing

/// Speed limits, checked by bytes over time: at every progress sample, the bytes received may
/// not exceed what the limit allows since the start, plus one burst of the bucket and the
/// largest buffer the network may hand over at once (which the limit can only pay for after
/// it arrived). The tolerance is wide on purpose; a broken limit is off by orders of magnitude
/// on loopback. A slow machine only makes the bytes smaller, so it cannot fail these checks.
@Suite("Speed limits", .timeLimit(.minutes(2)))
struct SpeedLimitTests {
    /// One burst (a quarter second at the rate) plus one socket read of up to 1 MiB.
    static func slack(_ rate: Int64) -> Double { TokenBucket.capacity(for: rate) + Double(1 << 20) }

    /// Bytes-over-time samples of everything a manager receives, from the first event on.
    final class Samples: Sendable {
        private let box = NIOLockedValueBox<[(seconds: Double, bytes: Int64)]>([])
        private let start = ContinuousClock.now

        func add(_ bytes: Int64) {
            let seconds = start.duration(to: .now).inSeconds
            box.withLockedValue { $0.append((seconds, bytes)) }
        }

        var all: [(seconds: Double, bytes: Int64)] { box.withLockedValue { $0 } }

        /// With `HAUL_SPEED_VERBOSE` set, prints the samples (to see how close a run came).
        func dump(_ label: String) {
            if ProcessInfo.processInfo.environment["HAUL_SPEED_VERBOSE"] != nil {
                print(label, all.map { "\(String(format: "%.2f", $0.seconds)):\($0.bytes >> 10)K" }.joined(separator: " "))
            }
        }

        /// Samples whose bytes exceed `rate` since the start, with 25% and `slack` to spare.
        func violations(rate: Int64, slack: Double) -> [String] {
            all.filter { Double($0.bytes) > Double(rate) * $0.seconds * 1.25 + slack }
                .map { "\($0.bytes) bytes after \($0.seconds) s" }
        }
    }

    /// Follows overall progress into `samples` until the stream ends; with `completions`, a
    /// download's completion is a sample too (for a manager running just that one).
    static func follow(_ events: AsyncStream<ManagerEvent>, into samples: Samples, completions: Bool = false) -> Task<Void, Never> {
        Task {
            for await event in events {
                switch event {
                case .overallProgress(let progress): samples.add(progress.completedBytes)
                case .completed(let info) where completions: samples.add(info.progress.completedBytes)
                default: break
                }
            }
        }
    }

    /// A download's own limit holds it to about that many bytes per second.
    @Test func perDownloadLimit() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 3 << 20
            let rate: Int64 = 1 << 20
            var request = Support.request(server, "/file/limited.bin", ["size": "\(size)", "seed": "140"], in: dir)
            request.maxBytesPerSecond = rate
            let samples = Samples()
            try await withDownloadManager(configuration: Support.fastConfiguration()) { manager in
                let follower = Self.follow(manager.managerEvents(), into: samples, completions: true)
                let id = try await manager.enqueue(request)
                #expect(try await manager.finished(id).state == .completed)
                await manager.shutdown()
                await follower.value
            }
            #expect(Support.contents(dir.appendingPathComponent("limited.bin")) == TestContent.bytes(seed: 140, size: size))
            #expect(samples.all.last?.bytes == Int64(size))
            samples.dump("per download")
            #expect(samples.violations(rate: rate, slack: Self.slack(rate)) == [])
        }
    }

    /// The global limit holds all downloads of a manager together, a segmented one included.
    @Test func globalLimitAcrossDownloads() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            let size = 3 << 19
            let rate: Int64 = 1 << 20
            var configuration = SegmentedDownloadTests.configuration()
            configuration.maxBytesPerSecond = rate
            let requests = (0..<2).map { index in
                Support.request(server, "/file/global\(index).bin", ["size": "\(size)", "seed": "\(150 + index)"], in: dir)
            }
            let samples = Samples()
            try await withDownloadManager(configuration: configuration) { manager in
                #expect(await manager.globalSpeedLimit == rate)
                let follower = Self.follow(manager.managerEvents(), into: samples)
                let group = try await manager.add(requests, toGroup: "both")
                #expect(try await group.completion.completed.count == 2)
                await manager.shutdown()
                await follower.value
            }
            #expect(server.requests(forKey: "/file/global0.bin").count > 1, "the limit does not stop splitting")
            // Both bodies at once may each hand over a large read before paying for it.
            samples.dump("global")
            #expect(samples.violations(rate: rate, slack: Self.slack(rate) + Double(1 << 20)) == [])
        }
    }

    /// Limits change while transfers wait on them: a slow download speeds up at once when its own limit, then the global one, is lifted.
    @Test func limitsChangeWhileRunning() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            // At the first limits this would take a minute; the test's patience is far shorter.
            let size = 8 << 20
            let request = Support.request(server, "/file/change.bin", ["size": "\(size)", "seed": "160"], in: dir)
            var configuration = Support.fastConfiguration()
            configuration.maxBytesPerSecond = 256 << 10
            try await withDownloadManager(configuration: configuration) { manager in
                let events = manager.managerEvents()
                let id = try await manager.enqueue(request)
                try await manager.setSpeedLimit(128 << 10, for: id)
                #expect(await manager.snapshot(id)?.request.maxBytesPerSecond == 128 << 10)
                _ = try await firstMatch(in: events, "the first bytes") { event -> Bool? in
                    if case .progress(id, let progress) = event, progress.completedBytes > 0 { return true }
                    return nil
                }
                try await manager.setSpeedLimit(nil, for: id)
                // Now the global limit (256 KiB/s) holds it; 1 MiB more takes about 4 s. This
                // wait proves nothing about the change (8 s at the old limit), so it is patient:
                // with the whole suite on 2 cores it has taken more than 20 s.
                _ = try await firstMatch(in: events, "1 MiB", within: .seconds(60)) { event -> Bool? in
                    if case .progress(id, let progress) = event, progress.completedBytes >= 1 << 20 { return true }
                    return nil
                }
                await manager.setGlobalSpeedLimit(nil)
                #expect(await manager.globalSpeedLimit == nil)
                // Unlimited, the remaining 7 MiB take a moment; at either old limit, far longer than 20 s.
                _ = try await firstMatch(in: events, "the download to complete", within: .seconds(20)) { event -> Bool? in
                    if case .completed(let info) = event, info.id == id { return true }
                    return nil
                }
                #expect(try await manager.finished(id).state == .completed)
            }
            #expect(Support.contents(dir.appendingPathComponent("change.bin")) == TestContent.bytes(seed: 160, size: size))
        }
    }

    /// A limit set for a queued download is kept with it: a manager opened again on the same state has it.
    @Test func perDownloadLimitIsStored() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let state = try temporary.subdirectory("state")
            let dir = try temporary.subdirectory("dir")
            var configuration = Support.fastConfiguration()
            configuration.maxConcurrentDownloads = 1
            // The first holds the only slot (1 KiB/s), so the second stays queued.
            let blocker = Support.request(server, "/file/blocker.bin", ["size": "\(1 << 20)", "rate": "1024"], in: dir)
            let queued = Support.request(server, "/file/queued.bin", ["size": "1000"], in: dir)
            let id = try await withDownloadManager(stateDirectory: state, configuration: configuration) { manager in
                try await manager.enqueue(blocker)
                let id = try await manager.enqueue(queued)
                try await manager.setSpeedLimit(300_000, for: id)
                #expect(await manager.snapshot(id)?.state == .queued)
                return id
            }
            let manager = try await DownloadManager.open(stateDirectory: state, configuration: configuration, continueInterrupted: false)
            #expect(await manager.snapshot(id)?.request.maxBytesPerSecond == 300_000)
            await manager.shutdown()
        }
    }
}
