import Foundation
@testable import Haul
@testable import HaulDaemon
import Testing

/// `haul.add` and `haul.addGroup` take a download's own wait deadline as an ISO 8601 date,
/// checked as the library checks it: a value that is not a date refuses the call, and nothing
/// is added.
@Suite(.timeLimit(.minutes(3))) struct HaulMethodWaitDeadlineTests {
    /// A request with `waitDeadline` is kept with it (`haul.status` gives it back); a group
    /// with one request whose `waitDeadline` is not a date is refused whole, naming the field.
    @Test func addTakesAndChecksTheDeadline() async throws {
        try await HaulMethodConfinementTests.withFixture { fixture in
            var request = DownloadRequest(
                url: URL(string: fixture.server.url("/file/d", ["size": "2000", "rate": "2000"]))!, directory: fixture.downloads,
                fileName: "d.bin", waitDeadline: Date(timeIntervalSince1970: 1_796_148_000))
            let id = try #require(try await fixture.socket.result("haul.add", ["app", try HaulSessionMethods.json(request)]).stringValue)
            let status = try await fixture.socket.result("haul.status", ["app", .string(id)])
            #expect(status["request"]?["waitDeadline"]?.stringValue == "2026-12-01T18:00:00.000Z")

            request.fileName = "e.bin"
            guard case .object(var bad) = try HaulSessionMethods.json(request) else { Issue.record("not an object"); return }
            bad["waitDeadline"] = .string("next week")
            let good = try HaulSessionMethods.json(request)
            let error = try await fixture.socket.error("haul.addGroup", ["app", "g", [good, .object(bad)]])
            #expect(error.message.contains("waitDeadline"), "\(error.message)")
            #expect(error.message.contains("not an ISO 8601 date"), "\(error.message)")
            #expect(try await fixture.listed(fixture.socket).count == 1)
        }
    }
}
