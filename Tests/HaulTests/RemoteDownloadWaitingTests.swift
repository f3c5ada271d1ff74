import Foundation
import Testing
@testable import Haul

/// `BackgroundSession` sees a daemon download that waits for its server as such.
@Suite("Remote download: waiting")
struct RemoteDownloadWaitingTests {
    /// `isWaitingToRetry` and its error survive the JSON trip; a daemon that predates the field
    /// is read as not waiting.
    @Test func roundTrip() throws {
        var info = DownloadInfo(id: DownloadID(rawValue: 7), request: DownloadRequest(
            url: URL(string: "http://h/a")!, directory: URL(fileURLWithPath: "/tmp")), group: nil)
        info.state = .running
        info.isWaitingToRetry = true
        info.error = HaulError(.connectionFailed, "h:80: connection refused")
        let data = try JSONEncoder().encode(RemoteDownload(info))
        let back = try JSONDecoder().decode(RemoteDownload.self, from: data).info
        #expect(back.isWaitingToRetry)
        #expect(back.error?.message == "h:80: connection refused")

        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object.removeValue(forKey: "waitingToRetry")
        let old = try JSONDecoder().decode(RemoteDownload.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(!old.info.isWaitingToRetry)
    }
}
