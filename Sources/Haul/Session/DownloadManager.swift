import CoreMetrics
import Foundation

/// The in-process download session: a queue, a scheduler, transfers, groups and events, in
/// this process.
///
/// Add downloads (alone or as a named group) and `await` their handles, or follow `events()`.
/// Transfers run concurrently up to the configured limits; each download moves through a
/// `DownloadStateMachine`, whose actions this actor carries out.
///
/// Opened on a state directory (`init(identifier:stateDirectory:configuration:)`), every
/// download, group and durable offset is kept in a SQLite store there, so a program that
/// restarts (after a crash or `kill -9` too) finds its downloads again and continues them from
/// their last checkpoint. Created with `init(configuration:)`, the store lives in memory only.
///
/// Call `close()` when done (or use `withDownloadManager`): it stops running transfers with
/// their part files and checkpoints kept, so a later run continues where this one stopped.
/// For downloads that go on while the process is gone, use `BackgroundSession`: it has the same
/// API (`DownloadSession`).
public actor DownloadManager: SessionBackend {
    /// How the manager schedules, retries and reports.
    public nonisolated let configuration: Configuration
    /// The session whose downloads this manager holds (its `identifier`).
    package nonisolated let session: String
    let store: any DownloadStoring
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
    /// What the manager reports to its metrics backend (`Configuration.metricsFactory`).
    let metrics: ManagerMetrics
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
    /// Callers waiting for a download to finish or a group to complete.
    var waits = WaitBook()
    /// Finished downloads and completed groups whose events the client has not acknowledged
    /// (with an outbox): the retention rule leaves them alone.
    var pins = OutboxPins()
    /// Runs the finishing steps of resources added in this process (`addResource`).
    let resourceSupervisor: ResourceSupervisor
    /// Leases and loops of a fleet member (`Configuration.fleet` on a PostgreSQL store); nil
    /// otherwise, and then nothing of `DownloadManager+Fleet` runs.
    var fleet: FleetState?
    /// What wakes the fleet's claim loop (`fleetWake()`), nil outside a fleet.
    nonisolated let fleetWakes: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)?

    /// A manager whose store lives in memory: nothing survives the process.
    public init(configuration: Configuration = Configuration()) {
        guard let store = try? DownloadStore.open(directory: nil) else {
            preconditionFailure("SQLite could not open an in-memory database")
        }
        self.init(configuration: configuration, store: store, session: "default")
    }

    /// Opens the session `identifier` in the store of `stateDirectory` (created if needed;
    /// `defaultStateDirectory` is Haul's usual place), finds its downloads again and reconciles each with what
    /// is on disk: those that were running or queued continue from their last checkpoint;
    /// paused ones stay paused. Throws when the store cannot be opened or is of a newer Haul.
    public nonisolated init(
        identifier: String = "default", stateDirectory: URL,
        configuration: Configuration = Configuration()
    ) async throws(HaulError) {
        let store = try DownloadStore.shared(directory: stateDirectory)
        self.init(configuration: configuration, store: store, session: identifier)
        try await restore(continueInterrupted: true)
        await superviseOwedResources()
    }

    /// `$XDG_STATE_HOME/haul`, else `~/.local/state/haul`: where `open` keeps its store by default.
    public static var defaultStateDirectory: URL { DownloadStore.defaultDirectory() }

    init(configuration: Configuration, store: any DownloadStoring, session: String) {
        self.configuration = configuration
        self.store = store
        self.session = session
        self.retention = RetentionQueue(maxFinished: configuration.retention.maxFinished)
        self.resourceSupervisor = ResourceSupervisor(book: store.stateDirectory.map {
            ResourceBook(stateDirectory: $0)
        } ?? ResourceBook(stateDirectory: URL(fileURLWithPath: NSTemporaryDirectory())))
        let outbox = configuration.keepsEventOutbox ? OutboxBuffer() : nil
        self.outbox = outbox
        self.hub = EventHub(outbox: outbox)
        let metrics = ManagerMetrics(factory: configuration.metricsFactory ?? MetricsSystem.factory, fleet: configuration.fleet != nil)
        self.metrics = metrics
        self.records.stateMeters = metrics.states
        let transport = HTTPTransport(configuration: configuration.transport)
        self.transport = transport
        let runner = TransferRunner(transport: transport, configuration: configuration)
        self.runner = runner
        self.lane = TransferLane(runner: runner)
        if let membership = configuration.fleet, let leasing = store as? any DownloadLeasing {
            // The session's limits are the claim's, across the fleet; locally, only the cap.
            self.fleet = FleetState(membership: membership, leasing: leasing)
            self.fleetWakes = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            self.scheduler = SchedulerState(limits: SchedulerState.Limits(global: membership.slots, perHost: nil))
        } else {
            self.fleetWakes = nil
            self.scheduler = SchedulerState(limits: SchedulerState.Limits(
                global: max(1, configuration.maxConcurrentDownloads),
                perHost: configuration.maxDownloadsPerHost.map { max(1, $0) },
                sequentialGroups: configuration.groupOrder == .sequential))
        }
        lane.onEnded { [weak self] in
            Task { await self?.takeTransferEnds() }
        }
    }

    /// A new stream of every manager event from now on, with whole infos: what the `haul`
    /// tool and the daemon follow. Each call is an independent subscriber.
    package nonisolated func managerEvents() -> AsyncStream<ManagerEvent> {
        hub.subscribe()
    }

    // MARK: Adding

    /// Validates and queues one download, and returns its ID (`add(_:)` returns its handle).
    @discardableResult
    package func enqueue(_ request: DownloadRequest) async throws(HaulError) -> DownloadID {
        try await addNew([request], group: nil)[0]
    }

    /// `add(_:toGroup:ifPresent:)` with `.addAnew`.
    @discardableResult
    package func add(_ requests: [DownloadRequest], toGroup name: String) async throws(HaulError) -> DownloadGroup {
        try await addMembers(requests, toGroup: name)
        return DownloadGroup(name: name, session: self)
    }

    /// Like `add(_:toGroup:)`, returning the new downloads' IDs in the order of `requests`
    /// (a remote client adding to a large group needs them, not the whole group's list).
    @discardableResult
    package func addMembers(_ requests: [DownloadRequest], toGroup name: String) async throws(HaulError) -> [DownloadID] {
        try await addNew(requests, group: name)
    }

    /// The one way new downloads come in, whichever public `add` was called: every request is
    /// validated first (all or none are added), each gets its record and part key, then all
    /// are written to the store in one transaction, and only then queued (or held back
    /// paused) and announced (`persistNew`). A large batch's rows go to that transaction as
    /// they are made (`BatchRecording`).
    func addNew(_ requests: [DownloadRequest], group: String?, paused: Bool = false, queueIndex: Int? = nil) async throws(HaulError) -> [DownloadID] {
        try Self.validate(requests)
        guard !isShutDown else { throw HaulError(.shutdown, "the download manager has been shut down") }
        if let group { createGroupIfNeeded(group) }
        var directories = DirectoryCache()
        // From here to the recording's end nothing may wait for the store: its writer waits
        // for the rows made here.
        let recording = queueIndex == nil ? openBatchRecording(forBatchOf: requests.count) : nil
        let ids = insert(requests.map { directories.normalized($0) }, group: group) { id in
            if paused { records[id]?.machine.heldBack() }
            if let recording { handOver(id, replacing: [], to: recording) }
        }
        try await persistNew(ids, queueIndex: queueIndex, recordedBy: recording)
        return ids
    }

    func createGroupIfNeeded(_ name: String) {
        groups.create(name)
    }

    /// Where the scheduler queues a download: its host, priority and group's place; `held`
    /// for a paused download, which keeps a place without being started.
    func enqueueForScheduling(_ record: Record, held: Bool = false, atFront: Bool = false) {
        if let fleet { return fleetEnqueue(record, held: held, atFront: atFront, fleet: fleet) }
        scheduler.enqueue(
            record.id, host: record.host, priority: record.kept.priority,
            group: record.group.flatMap { groups[$0]?.ordinal }, held: held, atFront: atFront)
    }

    /// The group with this name, if one was added.
    package func existingGroup(named name: String) -> DownloadGroup? {
        groups[name] == nil ? nil : DownloadGroup(name: name, session: self)
    }

    /// Creates the records of normalized requests, with room made once for the batch;
    /// `each` sees every new download as soon as its record is made.
    func insert(_ requests: [DownloadRequest], group: String?, each: (DownloadID) -> Void = { _ in }) -> [DownloadID] {
        records.reserveCapacity(requests.count)
        if order.count + requests.count > order.capacity {
            order.reserveCapacity(max(order.count + requests.count, order.capacity * 2))
        }
        var ids = DownloadIDBatch(count: requests.count)
        return requests.map { request in
            let id = insert(request, group: group, id: ids.next())
            each(id)
            return id
        }
    }

    /// Creates the record (with `proposed`, one of a `DownloadIDBatch`, as its ID unless
    /// taken); `persistNew` queues it once it is stored, so that no transfer can start (not
    /// even through a slot freed while the store is written) before its download is stored.
    func insert(_ request: DownloadRequest, group: String?, id proposed: DownloadID? = nil) -> DownloadID {
        var id = proposed ?? DownloadID.random()
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

    // MARK: Queries

    /// A snapshot of the download, or nil when the manager has none with this ID.
    package func snapshot(_ id: DownloadID) -> DownloadInfo? {
        records[id]?.info
    }

    /// Every download this manager knows, in the order they were added.
    public func downloads() -> [DownloadInfo] {
        order.compactMap { records[$0]?.info }
    }

    // MARK: Control

    /// Stops a download, keeping its bytes and resume state; returns once it has stopped.
    /// Throws `.unknownDownload`, or `.invalidState` for a download that has finished.
    public func pause(_ id: DownloadID) async throws(HaulError) {
        await settleOwedEnd(of: id)
        guard controlsLocally(id) else { return try await controlThroughFleet(.pause, id) }
        try await request(id) { $0.pause() }
    }

    /// Queues a paused (or failed) download again; it continues from its bytes when the resume
    /// rules allow. Throws `.unknownDownload`, or `.invalidState` for one that is not paused or
    /// failed.
    public func resume(_ id: DownloadID) throws(HaulError) {
        guard controlsLocally(id) else {
            // A fleet member that does not hold it: through the store, which this synchronous
            // call cannot wait for (the daemon calls `resumeThroughFleet`, which does).
            Task { [weak self] in
                guard let self else { return }
                do throws(HaulError) { try await self.controlThroughFleet(.resume, id) } catch {
                    await self.log(.warning, "resuming failed: \(error.message)", id, error: error)
                }
            }
            return
        }
        try resumeHere(id)
    }

    /// `resume(_:)` for a fleet member: a download another daemon holds, or nobody does, is
    /// resumed through the store (queued again there, for any daemon to claim), and errors
    /// (`.unknownDownload`, `.invalidState`) are thrown as for a download held here.
    package func resumeThroughFleet(_ id: DownloadID) async throws(HaulError) {
        await settleOwedEnd(of: id)
        guard controlsLocally(id) else { return try await controlThroughFleet(.resume, id) }
        try resumeHere(id)
    }

    /// `resume(_:)` of a download this daemon acts on itself.
    func resumeHere(_ id: DownloadID) throws(HaulError) {
        guard var record = records[id] else { throw unknown(id) }
        let action = record.machine.resume()
        records[id] = record
        if case .rejected(let error) = action { throw error }
        perform(action, for: id)
    }

    /// Stops a download for good and deletes its part file; returns once it has stopped.
    /// Throws `.unknownDownload`, or `.invalidState` for a download that has finished.
    public func cancel(_ id: DownloadID) async throws(HaulError) {
        await settleOwedEnd(of: id)
        guard controlsLocally(id) else { return try await controlThroughFleet(.cancel, id) }
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
    package func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        // A fleet member's transfers stop without a word in the store: they are not paused,
        // the other daemons take them over once their leases are given back (below).
        let leases = leaveFleet()
        for id in order where records[id]?.machine.isUnderway == true {
            try? await pause(id)
        }
        for id in order { scheduler.dequeue(id) }
        releaseAllWaiters()
        wakeOutboxWaiters()
        ticker?.cancel()
        ticker = nil
        await resourceSupervisor.stop()
        for timer in writeTimers.values { timer.cancel() }
        writeTimers = [:]
        await flushDirty()
        lane.close()
        await transport.shutdown()
        await releaseFleetLeases(leases)
        hub.finish()
        stopReportingStates()
    }

    func unknown(_ id: DownloadID) -> HaulError {
        HaulError(.unknownDownload, "no download with ID \(id)")
    }
}

/// Runs `body` with a manager and always shuts it down afterwards, keeping part files of
/// anything unfinished. With a `stateDirectory`, the manager is opened on that store (see
/// `DownloadManager.open`); without one, its store lives in memory.
public func withDownloadManager<T: Sendable>(
    identifier: String = "default",
    stateDirectory: URL? = nil,
    configuration: DownloadManager.Configuration = DownloadManager.Configuration(),
    _ body: (DownloadManager) async throws -> T
) async throws -> T {
    let manager: DownloadManager
    if let stateDirectory {
        manager = try await DownloadManager(identifier: identifier, stateDirectory: stateDirectory, configuration: configuration)
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
