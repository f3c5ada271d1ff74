import Foundation
import Haul
@testable import HaulDaemon
import Testing

/// The daemon's sessions and their settings.
@Suite("Session host")
struct SessionHostTests {
    /// A new limit is applied to the open session without reopening it; a new group order
    /// reopens it; the daemon's own session is never reopened under the aria2 methods; and a
    /// restarted host finds the session with its last settings.
    @Test func settingsChanges() async throws {
        let state = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("haul-host-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let host = SessionHost(configuration: .init(stateDirectory: state))
        try await host.start()
        let first = try await host.manager(for: "app", settings: SessionSettings(maxConcurrentDownloads: 4))
        let same = try await host.manager(for: "app", settings: SessionSettings(maxConcurrentDownloads: 2))
        #expect(first === same)
        #expect(await same.maxConcurrentDownloads == 2)
        let reopened = try await host.manager(for: "app", settings: SessionSettings(maxConcurrentDownloads: 2, groupOrder: .sequential))
        #expect(reopened !== first)
        await #expect(throws: HaulError.self) {
            _ = try await host.manager(for: SessionHost.defaultSession, settings: SessionSettings(groupOrder: .sequential))
        }
        await #expect(throws: HaulError.self) { _ = try await host.manager(for: "") }
        await host.shutdown()

        let sessions = try await DownloadManager.storedSessions(stateDirectory: state)
        let app = try #require(sessions.first { $0.id == "app" })
        #expect(app.settings == SessionSettings(maxConcurrentDownloads: 2, groupOrder: .sequential))
    }
}
