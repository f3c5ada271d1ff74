import Foundation

/// `DownloadSession.addResource` in process: the document is planned here, its finishing step
/// (the local playlist, the joined file, Metalink piece checks) recorded in the state directory
/// and run when the group completes, in this process or, after a restart, in the next one that
/// opens the session.
extension DownloadManager {
    /// Adds an HLS playlist or a Metalink 4 document (`source`: an http(s) URL or a local
    /// file) as one group in `directory`. The group completes once every file is here; its
    /// finishing step (the local playlist, the joined file) runs right after, in this process
    /// or in the next one that opens the session. Adding the same source to the same group
    /// again continues it.
    @discardableResult
    public func addResource(
        _ source: URL, toGroup name: String, in directory: URL, options: ResourceOptions = ResourceOptions()
    ) async throws(HaulError) -> DownloadGroup {
        let text = source.isFileURL ? source.path : source.absoluteString
        let plan = try await planResource(
            text, kind: options.kind.flatMap { ResourcePlan.Kind(rawValue: $0.rawValue) }, directory: directory,
            hls: try options.hlsOptions())
        let entry = ResourceBook.Entry(session: session, group: name, plan: plan)
        // Recorded first: a crash right after the group is added must still finish it.
        try resourceBook?.save(entry)
        do {
            try Self.makeDirectories(for: plan.requests)
            try await addContinuing(plan.requests, toGroup: name)
        } catch {
            resourceBook?.remove(session: session, group: name)
            throw error
        }
        await resourceSupervisor.supervise(entry, manager: self)
        return DownloadGroup(name: name, session: self)
    }

    /// The book of owed finishing steps, beside the store (none for a store in memory).
    nonisolated var resourceBook: ResourceBook? {
        store.stateDirectory.map { ResourceBook(stateDirectory: $0) }
    }

    /// Watches the owed finishing steps of this session again (a manager opened by an app).
    func superviseOwedResources() async {
        guard let book = resourceBook else { return }
        for entry in book.entries() where entry.session == session {
            await resourceSupervisor.supervise(entry, manager: self)
        }
    }
}
