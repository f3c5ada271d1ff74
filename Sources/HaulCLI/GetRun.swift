import Foundation
import Haul

/// One run of `haul get`: opens the download store, adds the plan as one group (continuing
/// what an earlier run of the same requests left unfinished, and not fetching again what it
/// completed), shows the events, waits for the group to complete or for SIGINT/SIGTERM, shuts
/// the manager down, and decides the exit status.
///
/// The manager's events are read by a single loop, so the reporter is only ever touched by
/// that loop and the order of output is the order of events; a signal acts on the manager
/// directly (see `RunInterruption`).
struct GetRun: Sendable {
    /// The store session `haul get` keeps its downloads in.
    static let session = "haul get"
    /// What `haul get` keeps of finished downloads: records of files it placed serve only to
    /// skip fetching them again when the same command runs again, so they stay in the store
    /// (never loaded up front; a request made again is looked up) for 30 days, 100,000 at most;
    /// a run that finds a file still in place counts its download as added again once it is
    /// 15 days old (`EarlierRunStore`), so that files some run keeps finding are never forgotten.
    /// A download an interrupted run left behind and no run asked for again in 30 days is
    /// canceled, its part file deleted.
    static let retention = DownloadManager.Retention(
        maxFinished: 100_000, maxAge: .seconds(30 * 24 * 3600), loadsEarlierFinished: false,
        abandonsUnfinishedAfter: .seconds(30 * 24 * 3600))
    static let interruptedMessage = "interrupted: part files kept; run the same command again to continue"

    let plan: DownloadPlan
    /// Playlists and Metalink documents among the arguments (see `GetRun+Documents`).
    var documents = Documents()
    let configuration: DownloadManager.Configuration
    let stateDirectory: URL
    let mode: OutputMode

    func run() async -> ExitStatus {
        let interruptions = RunInterruption()
        // Watch before anything starts, so that an early Ctrl-C still stops cleanly.
        let signals = SignalWatcher([SIGINT, SIGTERM]) { number in
            switch interruptions.received(number) {
            case .stop(let manager):
                // shutdown() pauses every transfer, which checkpoints its part file.
                if let manager { Task { await manager.shutdown() } }
            case .exitNow:
                // The part files stay; the resume records hold the last checkpoint.
                StandardStream.error.writeLine("\n" + Self.interruptedMessage)
                exit(ExitStatus.stopped(by: number).rawValue)
            case .ignore:
                break
            }
        }
        defer { signals.stop() }

        let manager: DownloadManager
        do {
            // Bad input is refused before the store is even opened: nothing is written.
            // The directory is checked below, after it was made: only a valid batch makes one.
            try DownloadManager.validate(plan.requests, checkingDirectories: false)
            try Self.makeDirectories(for: plan.requests)
            try DownloadManager.validateDirectories(of: plan.requests)
        } catch {
            StandardStream.error.writeLine("haul: error: \(error.message)")
            return ExitStatus(for: error)
        }
        let store: EarlierRunStore
        do {
            store = try await EarlierRunStore.open(stateDirectory: stateDirectory, session: Self.session, retention: Self.retention)
        } catch {
            StandardStream.error.writeLine("haul: error: cannot open the download store: \(error.message)")
            return ExitStatus(for: error)
        }
        // Files an earlier run placed and nobody changed since: reported here, not added.
        var intact: [DownloadInfo] = []
        var requests = plan.requests
        // What the look-up found of the earlier downloads of `requests`, for `add`.
        var earlier: DownloadManager.EarlierFinished?
        if documents.isEmpty {
            do {
                (intact, requests, earlier) = try await Self.setAsideIntact(requests, in: store)
            } catch {
                StandardStream.error.writeLine("haul: error: \(error.message)")
                return ExitStatus(for: error)
            }
            // Nothing to fetch: no manager, no HTTP client (see `GetRun+IntactFiles`).
            if requests.isEmpty { return reportIntactOnly(intact, interruptions: interruptions) }
        }
        do {
            // Downloads an earlier run left behind wait paused: only those requested again go on.
            var configuration = self.configuration
            configuration.retention = Self.retention
            manager = try await DownloadManager.open(store, configuration: configuration, continueInterrupted: false)
        } catch {
            StandardStream.error.writeLine("haul: error: cannot open the download store: \(error.message)")
            return ExitStatus(for: error)
        }
        // Subscribe before adding, so that no event of the batch is missed.
        let events = manager.managerEvents(of: mode.followedEvents)
        let group: DownloadGroup
        // The IDs of the group's downloads, in the order of `requests`.
        var added: [DownloadID] = []
        var resources: [ResourcePlan] = []
        var holdsGroup = false
        do {
            if !documents.isEmpty {
                (resources, requests) = try await planDocuments(manager)
                let members = resources.flatMap(\.requests)
                try DownloadManager.makeDirectories(for: members)
                requests += members
                if resources.isEmpty {
                    (intact, requests, earlier) = try await Self.setAsideIntact(requests, in: store)
                }
            }
            // Each run is its own group; downloads continued from earlier runs move into it.
            let name = "haul get \(UUID().uuidString)"
            // A live playlist's first load may list no segment yet: the group must not
            // complete before the recording adds them (released once it stopped, below).
            if resources.contains(where: { $0.live != nil }) {
                await manager.holdGroupOpen(name)
                holdsGroup = true
            }
            added = try await manager.addContinuing(requests, toGroup: name, earlier: earlier)
            group = try await manager.group(named: name)
        } catch {
            // The whole batch was validated first: nothing was queued or written.
            await manager.shutdown()
            StandardStream.error.writeLine("haul: error: \(error.message)")
            return ExitStatus(for: error)
        }
        var shutdown: Task<Void, Never>?
        if !interruptions.managerOpened(manager) {
            // Interrupted before the manager could be stopped by the signal handler.
            shutdown = Task { await manager.shutdown() }
        }
        // A prune the look-up found could wait (nothing it looked for lies in a directory this
        // session used) is made now, beside the batch's first transfers instead of before them
        // (the events wait in their stream meanwhile). Made at once, it counts no more than
        // the few downloads this run finished already.
        do {
            try await store.finishDeferredPrune()
        } catch {
            // Nothing of this run is lost: the next run prunes instead.
            StandardStream.error.writeLine("haul: warning: the download store was not pruned: \(error.message)")
        }
        var recordingError: HaulError?
        if shutdown == nil, resources.contains(where: { $0.live != nil }) {
            // Segments are added to the group as they appear; the events wait in the stream
            // and are shown below, once the run's downloads are all known.
            (resources, recordingError) = await Self.record(resources, group: group.name, manager: manager, quiet: mode == .quiet)
        }
        if holdsGroup { await manager.releaseGroupHold(group.name) }
        // The batch's own requests name its downloads. A live recording (which held the group
        // open) added more since, which only the group knows.
        let catalog = holdsGroup
            ? DownloadCatalog(intact + ((try? await group.downloads()) ?? []))
            : DownloadCatalog(intact, added: added, requests: requests)
        let reporter = mode.makeReporter(catalog: catalog, retry: configuration.retry)

        var tally = RunTally(total: catalog.count)
        Self.reportIntact(intact, to: reporter, tally: &tally)
        var completion: GroupSummary?
        var finishing: Task<[HaulError], Never>?
        let quiet = mode == .quiet
        // Ends when the manager has shut down and every event was delivered.
        for await managerEvent in events {
            let event = Self.including(intact, in: managerEvent, group: group.name)
            tally.record(event)
            reporter.handle(event, tally: tally)
            guard completion == nil, shutdown == nil else { continue }
            if case .groupCompleted(let summary) = event {
                if interruptions.settle() { completion = summary }
            } else if tally.finished == tally.total {
                // Every download ended here: the group completes next, or (some blocked,
                // paused by a full disk) not in this run.
            } else {
                continue
            }
            // Documents are finished once every file is here; the step needs the manager (a
            // Metalink piece may be fetched again), so it runs before the shutdown.
            let finish = !resources.isEmpty && tally.failed == 0 && tally.completed == tally.total && interruptions.settle()
            let step = Task { [resources] in finish ? await Self.finish(resources, manager: manager, quiet: quiet) : [] }
            finishing = step
            shutdown = Task {
                _ = await step.value
                await manager.shutdown()
            }
        }
        await shutdown?.value
        let interruption = interruptions.interruption

        var status: ExitStatus
        if let interruption {
            status = .stopped(by: interruption)
        } else if let completion {
            status = Self.status(of: completion)
        } else if tally.finished == tally.total {
            status = ExitStatus(forFailures: tally.failures)
        } else {
            status = .failure
        }
        if interruption == nil, status == .success, let first = await finishing?.value.first { status = ExitStatus(for: first) }
        if interruption == nil, status == .success, let recordingError { status = ExitStatus(for: recordingError) }
        reporter.finish(RunOutcome(tally: tally, status: status, interruptedBy: interruption, elapsed: tally.elapsed))
        if interruption != nil {
            StandardStream.error.writeLine(Self.interruptedMessage)
        }
        return status
    }

    /// Makes each destination directory (and its parents) that does not exist yet, as aria2c
    /// and `wget -P` do.
    static func makeDirectories(for requests: [DownloadRequest]) throws(HaulError) {
        // By URL, not path: a batch shares one directory, and taking its path 5,000 times cost
        // more than the rest of this function (6% of a re-run with every file present).
        var seen: Set<URL> = []
        for request in requests where seen.insert(request.directory).inserted {
            let path = request.directory.path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { continue }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                let code = Self.posixCode(error)
                throw HaulError(
                    code == EACCES || code == EPERM || code == EROFS ? .permissionDenied : .directoryNotFound,
                    "cannot create the directory \(path): \(code.map { String(cString: strerror($0)) } ?? (error as NSError).localizedDescription)")
            }
        }
    }

    /// The errno behind a Foundation file error, when it carries one.
    private static func posixCode(_ error: any Error) -> Int32? {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Int32(error.code) }
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain else { return nil }
        return Int32(underlying.code)
    }

    /// Success when everything completed (skips included); otherwise the failures' kind.
    static func status(of summary: GroupSummary) -> ExitStatus {
        let status = ExitStatus(forFailures: summary.failed.map { $0.error ?? HaulError(.invalidState, "failed without a reason") })
        if status == .success, !summary.canceled.isEmpty { return .failure }
        return status
    }
}
