import Foundation
import Haul

/// Resources made of shards in the daemon: a playlist or Metalink document is planned here
/// (the daemon fetches it), recorded with its finishing step, added as one group, and finished
/// by the daemon when the group completes, whether or not the client is still there, and
/// after a kill -9 or reboot too (`ResourceBook`).
extension SessionHost {
    /// What `haul.addResource` answers.
    struct AddedResource: Encodable {
        let group: String
        let ids: [String]
        let directory: String
        /// The local playlist (or first Metalink file) the finishing step makes, relative to `directory`.
        let entry: String?
        let files: Int
    }

    func addResource(session: String, group: String, plan: ResourcePlan) async throws(HaulError) -> AddedResource {
        let manager = try await manager(for: session)
        let entry = ResourceBook.Entry(session: session, group: group, plan: plan)
        // Recorded first: a crash right after the group is added must still finish it.
        try resourceBook.save(entry)
        let ids: [DownloadID]
        do {
            try DownloadManager.makeDirectories(for: plan.requests)
            ids = try await manager.addMembers(plan.requests, toGroup: group)
        } catch {
            resourceBook.remove(session: session, group: group)
            throw error
        }
        await resources.supervise(entry, manager: manager)
        return AddedResource(
            group: group, ids: ids.map(\.description), directory: plan.directory.path, entry: plan.entryName, files: ids.count)
    }
}
