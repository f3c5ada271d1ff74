import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestServer
import HaulTestSupport
import Testing

/// The daemon's sessions and their settings.
@Suite("Session host", .timeLimit(.minutes(3)))
struct SessionHostTests {
    /// A new limit is applied to the open session without reopening it; a new group order
    /// reopens it; the daemon's own session is never reopened under the aria2 methods; and a
    /// restarted host finds the session with its last settings.
    @Test func settingsChanges() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let state = temporary.file("state")
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

    /// aria2's session keeps at most `maxDownloadResult` stopped downloads, in memory and in
    /// the store, and writes no outbox rows (aria2 clients never acknowledge); an app's
    /// session keeps its events for its client.
    @Test func aria2SessionKeepsBoundedResultsAndNoOutbox() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let state = try temporary.subdirectory("state")
            let downloads = try temporary.subdirectory("downloads")
            let host = SessionHost(configuration: .init(
                stateDirectory: state, manager: RPCTest.fastConfiguration(maxConcurrent: 1), maxDownloadResult: 2))
            try await host.start()
            let aria2 = try await host.manager(for: SessionHost.defaultSession)
            func request(_ n: Int) -> DownloadRequest {
                DownloadRequest(url: URL(string: server.url("/file/kept\(n).bin", ["size": "1000", "seed": "\(n)"]))!, directory: downloads)
            }
            var ids: [DownloadID] = []
            for n in 0..<4 {
                let id = try await aria2.enqueue(request(n))
                #expect(try await aria2.finished(id).state == .completed)
                ids.append(id)
            }
            #expect(await aria2.downloads().map(\.id) == Array(ids.suffix(2)))
            let app = try await host.manager(for: "app", settings: SessionSettings())
            let appID = try await app.enqueue(request(9))
            _ = try await app.finished(appID)
            await host.shutdown()

            let store = try DownloadStore.shared(directory: state)
            #expect(try await store.events(session: SessionHost.defaultSession, after: 0, limit: 100).isEmpty)
            #expect(try await store.events(session: "app", after: 0, limit: 100).isEmpty == false)
            #expect(try await store.loadAll(session: SessionHost.defaultSession).map(\.id) == Array(ids.suffix(2)))
        }
    }
}
