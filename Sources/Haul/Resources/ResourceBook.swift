import Crypto
import Foundation

/// The resources whose finishing step is still owed, kept as files in the state directory
/// (`resources/`, one JSON file per session and group), so that a daemon killed -9 or a
/// machine rebooted between a group's completion and its finishing step runs that step when it
/// starts again.
///
/// An entry is written (atomically) before its group is added and removed only after the
/// finishing step succeeded; the step is idempotent, so running it again after a crash
/// between the two is harmless. The cost follows the resources in flight, not history.
package struct ResourceBook: Sendable {
    /// One owed finishing step.
    package struct Entry: Sendable, Hashable, Codable {
        package var session: String
        package var group: String
        package var plan: ResourcePlan

        package init(session: String, group: String, plan: ResourcePlan) {
            self.session = session
            self.group = group
            self.plan = plan
        }
    }

    package let directory: URL

    package init(stateDirectory: URL) {
        directory = stateDirectory.appendingPathComponent("resources", isDirectory: true)
    }

    package func save(_ entry: Entry) throws(HaulError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let data = try JSONEncoder().encode(entry)
            try ResourceFinisher.writeAtomically(data, name: fileName(entry.session, entry.group), in: directory)
        } catch let error as HaulError {
            throw error
        } catch {
            throw HaulError(.fileSystem, "cannot record the resource \(entry.group): \(error.localizedDescription)")
        }
    }

    package func remove(session: String, group: String) {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(fileName(session, group)))
    }

    /// Every owed step; unreadable files (a crash while one was first written) are skipped.
    package func entries() -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().filter { $0.hasSuffix(".json") }.compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { return nil }
            return try? JSONDecoder().decode(Entry.self, from: data)
        }
    }

    private func fileName(_ session: String, _ group: String) -> String {
        let digest = SHA256.hash(data: Data((session + "\u{0}" + group).utf8))
        return digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".json"
    }
}

/// Runs the finishing step of recorded resources when their groups complete: watches each
/// group, and when it completes with every member done, finishes it and clears its entry. A
/// group that completes with failures stays owed (its members may be resumed, and it may
/// complete again). Used by the daemon, for which apps may be gone when their resource is done.
package actor ResourceSupervisor {
    private let book: ResourceBook
    private var watching: [String: Task<Void, Never>] = [:]

    package init(book: ResourceBook) {
        self.book = book
    }

    /// Watches `entry`'s group in `manager` until it completes and is finished.
    package func supervise(_ entry: ResourceBook.Entry, manager: DownloadManager) {
        let key = entry.session + "\u{0}" + entry.group
        guard watching[key] == nil else { return }
        let book = self.book
        watching[key] = Task { [weak self] in
            // Subscribed before looking, so that a completion in between is not missed.
            let events = manager.managerEvents()
            var done = false
            if let summary = try? await manager.summary(ofGroup: entry.group) {
                done = await Self.finishIfComplete(entry, summary: summary, manager: manager, book: book)
            }
            if !done {
                for await event in events {
                    guard case .groupCompleted(let summary) = event, summary.name == entry.group else { continue }
                    done = await Self.finishIfComplete(entry, summary: summary, manager: manager, book: book)
                    if done { break }
                }
            }
            await self?.ended(key)
        }
    }

    /// Stops watching (at shutdown); owed steps stay recorded for the next start.
    package func stop() {
        for task in watching.values { task.cancel() }
        watching = [:]
    }

    private func ended(_ key: String) {
        watching[key] = nil
    }

    /// Groups being watched now.
    package var watchedCount: Int { watching.count }

    /// True when the step ran (or failed for good); false while the group is unfinished or failed.
    private static func finishIfComplete(
        _ entry: ResourceBook.Entry, summary: GroupSummary, manager: DownloadManager, book: ResourceBook
    ) async -> Bool {
        guard summary.count > 0, summary.succeeded else { return false }
        do {
            try await manager.finishResource(entry.plan)
            book.remove(session: entry.session, group: entry.group)
        } catch {
            // Left recorded: the next start tries again (a piece's mirrors may be back).
            return true
        }
        return true
    }
}
