import Foundation

/// The in-process download engine: a queue, a scheduler, transfers, groups and events.
///
/// Add downloads (alone or as a named group), then follow `events()` or `await` a group's
/// `completion`. Transfers run concurrently up to the configured limits; each download moves
/// through a `DownloadStateMachine`, whose actions this actor carries out.
///
/// Opened on a state directory (`DownloadManager.open(stateDirectory:)`), every download,
/// group and durable offset is kept in a SQLite store there, so a program that restarts (after
/// a crash or `kill -9` too) finds its downloads again and continues them from their last
/// checkpoint. Created with `init(configuration:)`, the store lives in memory only.
///
/// Call `shutdown()` when done (or use `withDownloadManager`): it stops running transfers with
/// their part files and checkpoints kept, so a later run continues where this one stopped.
public actor DownloadManager {
    public nonisolated let configuration: Configuration
    /// The session whose downloads this manager holds.
    public nonisolated let session: String
    let store: DownloadStore
    /// What the store is owed, and when it is written (see `StoreWriteQueue`).
    var writes = StoreWriteQueue(
        flushInterval: DownloadManager.storeFlushInterval, placementWindow: DownloadManager.placementBatchWindow)
    /// The armed batching timers of `writes`.
    var writeTimers: [StoreWriteQueue.Timer: Task<Void, Never>] = [:]
    var lastPosition: Int64 = 0
    let transport: HTTPTransport
    let runner: TransferRunner
    /// Where transfers run (worker tasks reused from one download to the next).
    let lane: TransferLane
    let hub: EventHub
    /// Events waiting for the next store write (with `keepsEventOutbox`).
    let outbox: OutboxBuffer?
    /// The store write in flight: writes that carry events go one after another, so that
    /// sequence numbers follow the order of events.
    var flushChain: Task<Bool, Never>?
    /// Why the last store write failed, for callers that must not go on without it.
    var lastWriteError: HaulError?
    /// Verified files waiting for their placement intent to be written (see
    /// `placeAfterRecording`).
    var pendingPlacements: [PendingPlacement] = []
    /// Long polls (`events(after:waitingUpTo:)`) waiting for the next events to be stored.
    var outboxWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    var scheduler: SchedulerState
    var records = RecordTable()
    /// One string per host name, shared by every download of that host.
    var hosts: [String: String] = [:]
    /// Insertion order, for listing.
    var order: [DownloadID] = []
    /// IDs in `order` whose download was forgotten since it was last compacted.
    var droppedFromOrder = 0
    var groups = GroupBook()
    /// Finished downloads that may be forgotten, and when (`Configuration.retention`).
    var retention: RetentionQueue
    /// Finished downloads of earlier processes stay in the store, not loaded
    /// (`Retention.loadsEarlierFinished` false): a request made again is looked up there.
    var finishedLeftInStore = false
    /// Events appended to the outbox since it was last trimmed to `Retention.maxKeptEvents`.
    var eventsSinceTrim = 0
    /// Handed back by `retention`, forgotten once the current action is carried out.
    var dueToForget: [DownloadID] = []
    /// Which unfinished download holds each part key (two never share a part file).
    var partKeys = PartKeyOwnership()
    var ticker: Task<Void, Never>?
    /// When the ticker last ran (nil while it is stopped): a late tick means the process was
    /// not running, which is not silence from servers (`starvation`).
    var lastTick: ContinuousClock.Instant?
    var isShutDown = false
    /// Set while `pauseAll` or `invalidateAndCancel` works through the downloads: a slot one
    /// of them frees must not start another that the same call is about to stop.
    var admissionSuspended = false

    /// A manager whose store lives in memory: nothing survives the process.
    public init(configuration: Configuration = Configuration()) {
        guard let store = try? DownloadStore.open(directory: nil) else {
            preconditionFailure("SQLite could not open an in-memory database")
        }
        self.init(configuration: configuration, store: store, session: "default")
    }

    /// Opens the store in `stateDirectory` (created if needed; default `$XDG_STATE_HOME/haul`),
    /// finds the session's downloads again and reconciles each with what is on disk. Those that
    /// were running or queued continue (or, with `continueInterrupted: false`, wait paused
    /// until resumed or added again); paused ones stay paused.
    public static func open(
        stateDirectory: URL = DownloadManager.defaultStateDirectory,
        session: String = "default",
        configuration: Configuration = Configuration(),
        continueInterrupted: Bool = true
    ) async throws(HaulError) -> DownloadManager {
        let store = try DownloadStore.shared(directory: stateDirectory)
        let manager = DownloadManager(configuration: configuration, store: store, session: session)
        try await manager.restore(continueInterrupted: continueInterrupted)
        return manager
    }

    /// `$XDG_STATE_HOME/haul`, else `~/.local/state/haul`: where `open` keeps its store by default.
    public static var defaultStateDirectory: URL { DownloadStore.defaultDirectory() }

    init(configuration: Configuration, store: DownloadStore, session: String) {
        self.configuration = configuration
        self.store = store
        self.session = session
        self.retention = RetentionQueue(maxFinished: configuration.retention.maxFinished)
        let outbox = configuration.keepsEventOutbox ? OutboxBuffer() : nil
        self.outbox = outbox
        self.hub = EventHub(outbox: outbox)
        let transport = HTTPTransport(configuration: configuration.transport)
        self.transport = transport
        let runner = TransferRunner(transport: transport, configuration: configuration)
        self.runner = runner
        self.lane = TransferLane(runner: runner)
        self.scheduler = SchedulerState(limits: SchedulerState.Limits(
            global: max(1, configuration.maxConcurrentDownloads),
            perHost: configuration.maxDownloadsPerHost.map { max(1, $0) },
            sequentialGroups: configuration.groupOrder == .sequential))
        lane.onEnded { [weak self] in
            Task { await self?.takeTransferEnds() }
        }
    }

    /// A new stream of every event from now on. Each call is an independent subscriber.
    public nonisolated func events() -> AsyncStream<DownloadEvent> {
        hub.subscribe()
    }

    // MARK: Adding

    /// Validates and queues one download. Throws for a bad URL, scheme, file name, header,
    /// or a destination directory that is missing or not writable; nothing is queued then.
    @discardableResult
    public func add(_ request: DownloadRequest) async throws(HaulError) -> DownloadID {
        try await addNew([request], group: nil)[0]
    }

    /// Validates every request first, then queues them all as one group (or none, if any is
    /// invalid), recorded in the store in one transaction. Adding to an existing group name
    /// extends that group.
    @discardableResult
    public func add(_ requests: [DownloadRequest], toGroup name: String) async throws(HaulError) -> DownloadGroup {
        try await addMembers(requests, toGroup: name)
        return DownloadGroup(name: name, manager: self)
    }

    /// Like `add(_:toGroup:)`, returning the new downloads' IDs in the order of `requests`
    /// (a remote client adding to a large group needs them, not the whole group's list).
    @discardableResult
    public func addMembers(_ requests: [DownloadRequest], toGroup name: String) async throws(HaulError) -> [DownloadID] {
        try await addNew(requests, group: name)
    }

    /// The one way new downloads come in, whichever public `add` was called: every request is
    /// validated first (all or none are added), each gets its record and part key, then all
    /// are written to the store in one transaction, and only then queued (or held back
    /// paused) and announced (`persistNew`).
    func addNew(_ requests: [DownloadRequest], group: String?, paused: Bool = false, queueIndex: Int? = nil) async throws(HaulError) -> [DownloadID] {
        try Self.validate(requests)
        guard !isShutDown else { throw HaulError(.shutdown, "the download manager has been shut down") }
        if let group { createGroupIfNeeded(group) }
        var directories = DirectoryCache()
        let ids = insert(requests.map { directories.normalized($0) }, group: group)
        if paused {
            for id in ids { records[id]?.machine.heldBack() }
        }
        try await persistNew(ids, queueIndex: queueIndex)
        return ids
    }

    func createGroupIfNeeded(_ name: String) {
        groups.create(name)
    }

    /// Where the scheduler queues a download: its host, priority and group's place; `held`
    /// for a paused download, which keeps a place without being started.
    func enqueueForScheduling(_ record: Record, held: Bool = false, atFront: Bool = false) {
        scheduler.enqueue(
            record.id, host: record.host, priority: record.kept.priority,
            group: record.group.flatMap { groups[$0]?.ordinal }, held: held, atFront: atFront)
    }

    /// The group with this name, if one was added.
    public func group(named name: String) -> DownloadGroup? {
        groups[name] == nil ? nil : DownloadGroup(name: name, manager: self)
    }

    /// Creates the records of normalized requests, with room made once for the batch.
    func insert(_ requests: [DownloadRequest], group: String?) -> [DownloadID] {
        records.reserveCapacity(requests.count)
        if order.count + requests.count > order.capacity {
            order.reserveCapacity(max(order.count + requests.count, order.capacity * 2))
        }
        return requests.map { insert($0, group: group) }
    }

    /// Creates the record; `persistNew` queues it once it is stored, so that no transfer can
    /// start (not even through a slot freed while the store is written) before its download
    /// is in the store.
    func insert(_ request: DownloadRequest, group: String?) -> DownloadID {
        var id = DownloadID.random()
        while records.contains(id) { id = DownloadID.random() }
        let key = partKeys.newKey(for: request, id: id)
        lastPosition += 1
        records[id] = Record(
            id: id, request: request, group: group, partKey: key, host: internedHost(of: request.url),
            position: lastPosition, createdAt: Date())
        order.append(id)
        if let group { groups.add(id, to: group) }
        return id
    }

    /// The host name in lower case, as one shared string per host.
    func internedHost(of url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        if let known = hosts[host] { return known }
        hosts[host] = host
        return host
    }

    /// Checks requests the way `add` does, without adding them: a caller can refuse bad
    /// input before it opens anything. Without `checkingDirectories`, the destination
    /// directories are not asked about (a caller that makes them checks the rest first).
    public static func validate(_ requests: [DownloadRequest], checkingDirectories: Bool = true) throws(HaulError) {
        // A batch nearly always shares one directory: ask the file system about it once.
        var checkedDirectory: URL?
        for request in requests {
            try validate(request, directoryChecked: !checkingDirectories || request.directory == checkedDirectory)
            checkedDirectory = request.directory
        }
    }

    static func validate(_ request: DownloadRequest, directoryChecked: Bool = false) throws(HaulError) {
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard !scheme.isEmpty, request.url.host?.isEmpty == false || scheme != "http" && scheme != "https" else {
            throw HaulError(.invalidURL, "'\(request.url.absoluteString)' is not a valid URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw HaulError(.unsupportedScheme, "'\(request.url.absoluteString)': only http and https are supported")
        }
        try request.validateMirrors()
        if let name = request.fileName { try FileNaming.validateUserFileName(name) }
        for header in request.headers {
            guard !header.name.isEmpty, !header.name.contains(where: { $0.isWhitespace || $0 == ":" }),
                  !header.value.contains(where: \.isNewline)
            else { throw HaulError(.invalidRequest, "invalid header '\(header.name)'") }
        }
        guard !directoryChecked else { return }
        let directory = request.directory.path
        let status = SystemCalls.directoryStatus(directory)
        guard status.exists else { throw HaulError(.directoryNotFound, "\(directory) does not exist or is not a directory") }
        guard status.writable else { throw HaulError(.permissionDenied, "\(directory) is not writable") }
    }

    // MARK: Queries

    public func info(_ id: DownloadID) -> DownloadInfo? {
        records[id]?.info
    }

    /// Every download this manager knows, in the order they were added.
    public func downloads() -> [DownloadInfo] {
        order.compactMap { records[$0]?.info }
    }

    /// Returns once the download has completed, failed or been canceled (at once if it has).
    /// A paused download is not finished: this waits until it is resumed and ends, or until
    /// the manager shuts down (then the returned state is not terminal).
    public func finished(_ id: DownloadID) async throws(HaulError) -> DownloadInfo {
        guard let record = records[id] else { throw unknown(id) }
        if record.machine.publicState.isTerminal || isShutDown { return record.info }
        return await withCheckedContinuation { continuation in
            records[id]?.details.finishWaiters.append(continuation)
        }
    }

    // MARK: Control

    /// Stops a download, keeping its bytes and resume state; returns once it has stopped.
    public func pause(_ id: DownloadID) async throws(HaulError) {
        try await request(id) { $0.pause() }
    }

    /// Queues a paused (or failed) download again; it continues from its bytes when it can.
    public func resume(_ id: DownloadID) throws(HaulError) {
        guard var record = records[id] else { throw unknown(id) }
        let action = record.machine.resume()
        records[id] = record
        if case .rejected(let error) = action { throw error }
        perform(action, for: id)
    }

    /// Stops a download for good and deletes its part file; returns once it has stopped.
    public func cancel(_ id: DownloadID) async throws(HaulError) {
        try await request(id) { $0.cancel() }
    }

    func request(_ id: DownloadID, _ event: (inout DownloadStateMachine) -> DownloadStateMachine.Action) async throws(HaulError) {
        guard var record = records[id] else { throw unknown(id) }
        let action = event(&record.machine)
        records[id] = record
        if case .rejected(let error) = action { throw error }
        perform(action, for: id)
        if case .stopTransfer = action { await waitUntilStopped(id) }
    }

    /// Returns once the download's transfer, being stopped, has ended (at once if it has).
    func waitUntilStopped(_ id: DownloadID) async {
        // Checked and registered in one step on the actor: a transfer that already ended has
        // woken its waiters, and this caller must not wait for it.
        await withCheckedContinuation { continuation in
            if case .stopping = records[id]?.machine.state {
                records[id]?.details.stopWaiters.append(continuation)
            } else {
                continuation.resume()
            }
        }
    }

    /// Stops every running transfer (keeping part files and resume records), then releases
    /// the HTTP client. Queued and paused downloads stay as they are. Idempotent.
    public func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        for id in order where records[id]?.machine.isUnderway == true {
            try? await pause(id)
        }
        for id in order { scheduler.dequeue(id) }
        releaseAllWaiters()
        wakeOutboxWaiters()
        ticker?.cancel()
        ticker = nil
        for timer in writeTimers.values { timer.cancel() }
        writeTimers = [:]
        await flushDirty()
        lane.close()
        await transport.shutdown()
        hub.finish()
    }

    func unknown(_ id: DownloadID) -> HaulError {
        HaulError(.unknownDownload, "no download with ID \(id)")
    }
}

/// Runs `body` with a manager and always shuts it down afterwards, keeping part files of
/// anything unfinished. With a `stateDirectory`, the manager is opened on that store (see
/// `DownloadManager.open`); without one, its store lives in memory.
public func withDownloadManager<T: Sendable>(
    stateDirectory: URL? = nil,
    session: String = "default",
    configuration: DownloadManager.Configuration = DownloadManager.Configuration(),
    _ body: (DownloadManager) async throws -> T
) async throws -> T {
    let manager: DownloadManager
    if let stateDirectory {
        manager = try await DownloadManager.open(stateDirectory: stateDirectory, session: session, configuration: configuration)
    } else {
        manager = DownloadManager(configuration: configuration)
    }
    do {
        let result = try await body(manager)
        await manager.shutdown()
        return result
    } catch {
        await manager.shutdown()
        throw error
    }
}
