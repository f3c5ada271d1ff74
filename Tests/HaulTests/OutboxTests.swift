import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// The event outbox: what a returning client of a session is given.
@Suite("Event outbox", .timeLimit(.minutes(3)))
struct OutboxTests {
    private func configuration(_ order: GroupOrder = .interleaved, maxConcurrent: Int = 4) -> DownloadManager.Configuration {
        var configuration = Support.fastConfiguration(maxConcurrent: maxConcurrent)
        configuration.keepsEventOutbox = true
        configuration.groupOrder = order
        return configuration
    }

    /// Started, completed (with file and checksums) and group-completed events are kept in order,
    /// survive a reopen of the store, and acknowledged ones are gone.
    @Test(arguments: StoreBackend.allCases) func keptInOrderUntilAcknowledged(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            let requests = (0..<5).map { n in Support.request(server, "/file/o\(n).bin", ["size": "\(2000 + n)", "seed": "\(n)"], in: dir) }
            do {
                let manager = try await DownloadManager.open(store: location, session: "app", configuration: configuration())
                let summary = try await (try await manager.add(requests, toGroup: "g")).completion
                #expect(summary.completed.count == 5)
                await manager.shutdown()
            }
            let manager = try await DownloadManager.open(store: location, session: "app", configuration: configuration())
            let events = try await manager.storedEvents(after: 0)
            #expect(events.map(\.sequence) == events.map(\.sequence).sorted())
            #expect(Set(events.map(\.sequence)).count == events.count)
            #expect(events.filter { $0.kind == .started }.count == 5)
            let completed = events.filter { $0.kind == .completed }
            #expect(completed.count == 5)
            for event in completed {
                let started = try #require(events.firstIndex { $0.kind == .started && $0.download == event.download })
                #expect(started < events.firstIndex(of: event)!)
                let path = try #require(event.fileURL?.path)
                #expect(FileManager.default.fileExists(atPath: path))
                #expect(event.group == "g")
            }
            #expect(events.last?.kind == .groupCompleted)
            #expect(events.last?.completed?.count == 5)

            let middle = events[events.count / 2].sequence
            try await manager.acknowledgeEvents(through: middle)
            let rest = try await manager.storedEvents(after: 0)
            #expect(rest.map(\.sequence) == events.filter { $0.sequence > middle }.map(\.sequence))
            await manager.shutdown()
        }
    }

    /// A long poll returns as soon as a new event is stored, not at its timeout.
    @Test func longPollWakesOnNewEvents() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            try await withDownloadManager(identifier: "poll", stateDirectory: state, configuration: configuration()) { manager in
                let poll = Task { try await manager.storedEvents(after: 0, waitingUpTo: .seconds(60)) }
                _ = try await manager.enqueue(Support.request(server, "/file/p.bin", ["size": "3000"], in: dir))
                let events = try await poll.value
                #expect(!events.isEmpty)
                #expect(events.first?.kind == .started)
            }
        }
    }

    /// Two sessions in one state directory never see each other's events.
    @Test(arguments: StoreBackend.allCases) func sessionsAreSeparate(_ backend: StoreBackend) async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = try temporary.subdirectory("dir")
            let state = try temporary.subdirectory("state")
            let location = try await backend.location(state: state)
            let a = try await DownloadManager.open(store: location, session: "a", configuration: configuration())
            let b = try await DownloadManager.open(store: location, session: "b", configuration: configuration())
            _ = try await (try await a.add([Support.request(server, "/file/a.bin", ["size": "100"], in: dir)], toGroup: "ga")).completion
            #expect(try await b.storedEvents(after: 0).isEmpty)
            #expect(try await a.storedEvents(after: 0).contains { $0.kind == .groupCompleted && $0.group == "ga" })
            #expect(await b.downloads().isEmpty)
            let sessions = try await DownloadManager.storedSessions(store: location).map(\.id)
            #expect(sessions.contains("a"))
            await a.shutdown()
            await b.shutdown()
        }
    }

    /// With sequential group order, no download of the second group starts before every
    /// download of the first has finished.
    @Test func sequentialGroupsRunInOrder() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let dir = temporary.url
            try await withDownloadManager(configuration: configuration(.sequential, maxConcurrent: 3)) { manager in
                let first = (0..<6).map { n in Support.request(server, "/file/s1-\(n).bin", ["size": "20000", "rate": "400000"], in: dir) }
                let second = (0..<6).map { n in Support.request(server, "/file/s2-\(n).bin", ["size": "20000"], in: dir) }
                let events = manager.managerEvents()
                let a = try await manager.add(first, toGroup: "first")
                let b = try await manager.add(second, toGroup: "second")
                let firstIDs = Set(try await a.downloads().map(\.id))
                let secondIDs = Set(try await b.downloads().map(\.id))
                var finishedOfFirst = 0
                for await event in events {
                    switch event {
                    case .completed(let info) where firstIDs.contains(info.id): finishedOfFirst += 1
                    case .started(let id, _, _) where secondIDs.contains(id):
                        #expect(finishedOfFirst == firstIDs.count, "a download of the second group started early")
                    case .groupCompleted(let summary) where summary.name == "second":
                        #expect(summary.completed.count == 6)
                        return
                    default: break
                    }
                }
            }
        }
    }
}
