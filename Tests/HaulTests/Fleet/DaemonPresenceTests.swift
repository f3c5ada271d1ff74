import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// `haul.daemon`: who is alive in a fleet on one database.
@Suite("Daemon table", .timeLimit(.minutes(2)))
struct DaemonPresenceTests {
    /// Two daemons show; a clean stop removes its row; a daemon that stopped beating long ago
    /// is deleted by the next heartbeat of a living one. Beats are quick and death is ten
    /// minutes away, so a loaded machine never makes a living daemon look dead here.
    @Test func daemonsAppearBeatAndAgeOut() async throws {
        let fixture = try await LeaseFixture.make(SessionSettings())
        let one = try await fixture.daemon(), two = try await fixture.daemon()
        let first = try await PostgresDaemonPresence.start(store: one, fleetID: "d1", heartbeat: .milliseconds(300), deadAfter: .seconds(600), host: "h1", pid: 11)
        let second = try await PostgresDaemonPresence.start(store: two, fleetID: "d2", heartbeat: .milliseconds(300), deadAfter: .seconds(600), host: "h2", pid: 22)

        let alive = try await second.alive()
        #expect(alive.map(\.id) == ["d1", "d2"])
        #expect(alive.map(\.host) == ["h1", "h2"] && alive.map(\.pid) == [11, 22])
        let seen = try #require(alive.first?.lastSeen)
        try await waitUntil("d1's heartbeat moves its lastSeen") {
            try await second.alive().first { $0.id == "d1" }.map { $0.lastSeen > seen } == true
        }

        await first.stop()
        #expect(try await second.alive().map(\.id) == ["d2"])

        _ = try await fixture.sql("INSERT INTO haul.daemon (id, host, pid, started, lastSeen) VALUES ('dead', 'gone', 1, now() - interval '1 hour', now() - interval '1 hour')")
        try await waitUntil("the dead daemon's row ages out") {
            try await fixture.sql("SELECT count(*) FROM haul.daemon WHERE id = 'dead'") == "0"
        }
        await second.stop()
        #expect(try await fixture.sql("SELECT count(*) FROM haul.daemon") == "0")
    }
}
