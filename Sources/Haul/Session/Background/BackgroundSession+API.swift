import Foundation

/// `DownloadSession` over the daemon's `haul.*` methods.
extension BackgroundSession {
    /// Adds one download to the session in the daemon. Not repeated when the daemon is lost
    /// during the call (it may have been added): the error says so, and the session is
    /// attached again for the next call.
    @discardableResult
    public func add(_ request: DownloadRequest) async throws(HaulError) -> Download {
        let id: DownloadID = try await call("haul.add", identifier, request.normalized, retrying: false)
        return Download(id: id, session: self)
    }

    /// Adds every request as one group in one call; the daemon schedules them without any
    /// round trip to this process. Repeated once after a lost daemon only with `.continue`,
    /// which cannot add a request twice.
    @discardableResult
    public func add(
        _ requests: [DownloadRequest], toGroup name: String, ifPresent policy: ExistingDownloadPolicy
    ) async throws(HaulError) -> DownloadGroup {
        let _: [DownloadID] = try await call(
            "haul.addGroup", identifier, name, requests.map(\.normalized), policy == .continue ? "continue" : "addAnew",
            retrying: policy == .continue)
        return DownloadGroup(name: name, session: self)
    }

    /// Adds the resource in the daemon, which fetches the document, plans it and runs its
    /// finishing step when the group completes, after a restart too. `source` must be an
    /// http(s) URL over TCP; `directory` must be one the daemon may write to.
    @discardableResult
    public func addResource(
        _ source: URL, toGroup name: String, in directory: URL, options: ResourceOptions = ResourceOptions()
    ) async throws(HaulError) -> DownloadGroup {
        let request = ResourceRequest(
            directory: directory.standardizedFileURL.path, kind: options.kind?.rawValue, variant: options.variant,
            join: options.join, allowKeyHosts: options.allowsKeysOnOtherHosts, headers: options.headers)
        let text = source.isFileURL ? source.path : source.absoluteString
        let _: JSONRPCAnyResult = try await call("haul.addResource", identifier, name, text, request, retrying: false)
        return DownloadGroup(name: name, session: self)
    }

    /// The options of `haul.addResource`, as the daemon reads them.
    struct ResourceRequest: Encodable, Sendable {
        let directory: String
        let kind: String?
        let variant: String?
        let join: Bool
        let allowKeyHosts: Bool
        let headers: [HeaderField]
    }

    public func download(_ id: DownloadID) async throws(HaulError) -> Download {
        _ = try await info(id)
        return Download(id: id, session: self)
    }

    public func group(named name: String) async throws(HaulError) -> DownloadGroup {
        _ = try await summary(ofGroup: name)
        return DownloadGroup(name: name, session: self)
    }

    /// The session's downloads, in the order they were added.
    public func downloads() async throws(HaulError) -> [DownloadInfo] {
        try await call("haul.list", identifier, returning: [RemoteDownload].self).map(\.info)
    }

    public func info(_ id: DownloadID) async throws(HaulError) -> DownloadInfo {
        try await call("haul.status", identifier, id.description, returning: RemoteDownload.self).info
    }

    public func pause(_ id: DownloadID) async throws(HaulError) {
        let _: String = try await call("haul.pause", identifier, id.description)
    }

    public func resume(_ id: DownloadID) async throws(HaulError) {
        let _: String = try await call("haul.resume", identifier, id.description)
    }

    public func cancel(_ id: DownloadID) async throws(HaulError) {
        let _: String = try await call("haul.cancel", identifier, id.description)
    }

    public func remove(_ id: DownloadID, deletingFile: Bool = false) async throws(HaulError) {
        let _: String = try await call("haul.remove", identifier, id.description, deletingFile)
    }

    /// Gives the session up deliberately (the "force quit"): running downloads stop with their
    /// bytes and resume state kept, queued ones are canceled, paused ones stay paused.
    public func invalidateAndCancel() async throws(HaulError) {
        let _: String = try await call("haul.invalidateAndCancel", identifier)
    }

    public func acknowledge(_ event: DownloadEvent) async throws(HaulError) {
        guard let sequence = event.sequence else { return }
        try await acknowledge(through: sequence)
    }

    /// Deletes the kept events up to and including `sequence`: they were handled.
    package func acknowledge(through sequence: Int64) async throws(HaulError) {
        let _: String = try await call("haul.acknowledge", identifier, sequence)
    }

    /// The next kept events after `sequence` and the progress of running downloads; when
    /// there are none yet, waits up to `configuration.eventPollWait` (unless `waiting` is false).
    package func poll(after sequence: Int64, waiting: Bool = true, limit: Int = 1000) async throws(HaulError) -> RemoteEventBatch {
        let wait = waiting ? Int(configuration.eventPollWait.components.seconds * 1000) : 0
        return try await client.call("haul.events", identifier, sequence, wait, limit)
    }
}

/// A JSON-RPC result whose content the caller does not need (any JSON value is accepted).
struct JSONRPCAnyResult: Decodable, Sendable {
    init(from decoder: any Decoder) throws {}
}
