import Foundation
@testable import Haul
import Testing

/// The listings a daemon call builds from a manager's records: IDs by state in the order they
/// were added, briefs for totals, and a window of infos.
@Suite struct ManagerListingTests {
    @Test func listingsFollowTheOrderOfAdding() async throws {
        let manager = DownloadManager()
        let directory = FileManager.default.temporaryDirectory
        var ids: [DownloadID] = []
        for n in 0..<6 {
            let request = DownloadRequest(url: URL(string: "http://127.0.0.1:9/\(n).bin")!, directory: directory)
            ids.append(try await manager.add(request, queueIndex: nil, paused: true))
        }
        // Forgetting one leaves a hole in the table and in the manager's order.
        try await manager.remove(ids[2])
        let kept = ids.filter { $0 != ids[2] }
        #expect(await manager.downloadIDs(inStates: [.paused]) == kept)
        #expect(await manager.downloadIDs(inStates: [.running, .completed]).isEmpty)
        let briefs = await manager.briefs()
        #expect(Set(briefs.map(\.id)) == Set(kept))
        #expect(briefs.allSatisfy { $0.state == .paused && $0.group == nil })
        #expect(await manager.downloads(offset: 1, limit: 2).map(\.id) == Array(kept[1...2]))
        #expect(await manager.downloads(offset: 4, limit: 10).map(\.id) == [kept[4]])
        #expect(await manager.downloads(offset: 9, limit: 10).isEmpty)
        await manager.shutdown()
    }
}
