import Foundation
@testable import Haul
import HaulTestSupport
import NIOConcurrencyHelpers
import Testing

/// `LISTEN/NOTIFY` between daemons on one database: each store is opened as a separate daemon
/// would (its own pool and its own listening connection). Waits have time limits; the
/// fallback poll is set far beyond them, so a wait that returns was woken by a notification.
@Suite("Fleet notifications", .timeLimit(.minutes(3)))
struct FleetNotificationTests {
    /// The store's feed, listening, with the fallback poll out of the test's reach.
    private func listening(_ store: PostgresStore) async throws -> StoreChangeFeed {
        let feed = try #require(store.changes)
        feed.fallbackPollInterval = .seconds(3600)
        _ = feed.generation(of: "start")
        try await waitUntil("the store listens") { store.listener.listeningProcess != nil }
        return feed
    }

    private func appendEvent(_ store: PostgresStore, _ fixture: LeaseFixture) async throws {
        try await store.submit(.appendEvents(session: fixture.session, [StoredEvent(kind: .canceled, download: nil)]))
    }

    /// A long poll on daemon B returns the event daemon A appended, woken by the notification
    /// (the fallback poll is an hour away), and an acknowledgement through B is A's too.
    @Test func anEventAppendedByOneDaemonWakesAWaitOnAnother() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let a = try await fixture.daemon(), b = try await fixture.daemon()
        let feed = try await listening(b)
        let onB = fixture.manager(on: b)

        let started = ContinuousClock.now
        let poll = Task { try await onB.storedEvents(after: 0, waitingUpTo: .seconds(120)) }
        try await waitUntil("B's poll waits") { feed.waitingReaders == 1 }
        try await appendEvent(a, fixture)
        let events = try await poll.value
        #expect(events.count == 1 && events.first?.kind == .canceled)
        #expect(ContinuousClock.now - started < .seconds(60), "woken by the notification, not by the poll's end")

        try await onB.acknowledgeEvents(through: try #require(events.last?.sequence))
        #expect(try await a.events(session: fixture.session, after: 0, limit: 10).isEmpty)
        await onB.close()
    }

    /// The listening connection dropped by the server comes back (with backoff); a wait begun
    /// before the drop is woken by the reconnection (notifications may have been lost), and
    /// notifications flow again on the new connection.
    @Test func aDroppedListeningConnectionRecovers() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let a = try await fixture.daemon(), b = try await fixture.daemon()
        let feed = try await listening(b)
        let first = try #require(b.listener.listeningProcess)

        let woken = NIOLockedValueBox(false)
        let token = feed.observeEvents(of: fixture.session, unchangedSince: feed.generation(of: fixture.session)) {
            woken.withLockedValue { $0 = true }
        }
        #expect(token != nil)
        _ = try await fixture.sql("SELECT pg_terminate_backend(\(first))")
        try await waitUntil("B listens again on a new connection") {
            b.listener.connections == 2 && b.listener.listeningProcess.map { $0 != first } == true
        }
        #expect(woken.withLockedValue { $0 }, "a reconnection wakes every wait")

        let onB = fixture.manager(on: b)
        let poll = Task { try await onB.storedEvents(after: 0, waitingUpTo: .seconds(120)) }
        try await waitUntil("B's poll waits") { feed.waitingReaders == 1 }
        try await appendEvent(a, fixture)
        #expect(try await poll.value.count == 1)
        await onB.close()
    }

    /// Queuing downloads on daemon A (an add) reaches daemon B's claim hook with the session.
    @Test func addingWorkNotifiesEveryDaemon() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let a = try await fixture.daemon(), b = try await fixture.daemon()
        let feed = try await listening(b)
        let changes = feed.queueChanges()
        var iterator = changes.makeAsyncIterator()
        var download = StoreTests.minimal(1, session: fixture.session, group: nil)
        download.state = .queued
        try await a.save([download])
        var seen: String?? = nil
        while let change = await iterator.next() {
            seen = change
            if change == fixture.session { break }
        }
        #expect(seen == .some(fixture.session))
    }

    /// SQLite has no other writers: no feed, and a long poll is woken by its own writes only.
    @Test func sqliteHasNoFeed() throws {
        let store = try DownloadStore.open(directory: nil)
        #expect(store.changes == nil)
    }
}
