import Haul

/// Running counts for a whole `haul get`: how many downloads finished and how, bytes so far,
/// and the total expected, for the summary and the terminal's total line.
///
/// Updated in O(1) per event, so that totals for 5,000 files never walk them. The total is
/// computed here rather than taken from the manager's group progress because that one stays
/// unknown for good once a member fails before its length was known; here failed downloads
/// simply drop out of the total.
struct RunTally: Sendable {
    /// Downloads in the run.
    let total: Int
    /// Completed downloads, including skipped ones.
    private(set) var completed = 0
    /// Completed downloads that were skipped because the file existed (`--conflict skip`).
    private(set) var skipped = 0
    /// Failed downloads with their errors, in the order they failed.
    private(set) var failures: [HaulError] = []
    /// Bytes of the completed files.
    private(set) var completedBytes: Int64 = 0
    /// Bytes received from servers in this run by attempts that have ended, whether or not
    /// their download completed (a failed 256 MiB download that got 32 MiB received 32 MiB).
    private var endedAttemptsReceived: Int64 = 0
    /// Each running attempt's first offset and its latest known offset.
    private var attempts: [DownloadID: (start: Int64, latest: Int64)] = [:]
    /// Latest bytes of each unfinished download that has started, and their sum.
    private var inFlight: [DownloadID: Int64] = [:]
    private var inFlightBytes: Int64 = 0
    /// Known lengths of downloads that have not failed, and their sum.
    private var expected: [DownloadID: Int64] = [:]
    private var expectedBytes: Int64 = 0
    /// The group's smoothed speed, from the manager's throttled group progress.
    private var bytesPerSecond: Double = 0
    let startedAt = ContinuousClock.now

    init(total: Int) { self.total = total }

    var failed: Int { failures.count }
    var finished: Int { completed + failed }
    var elapsed: Duration { startedAt.duration(to: .now) }

    /// Bytes so far and, once every download that has not failed announced its length, the
    /// total; with the group's speed, for the total line's ETA.
    var progress: TransferProgress {
        let everyLengthKnown = expected.count == total - failed
        return TransferProgress(
            completedBytes: completedBytes + inFlightBytes,
            expectedBytes: everyLengthKnown ? expectedBytes : nil,
            bytesPerSecond: bytesPerSecond)
    }

    /// Bytes received from servers during this run, by every download, finished or not. Bytes
    /// a download already had from an earlier run are not counted; bytes fetched again after a
    /// file changed are.
    var receivedBytes: Int64 {
        endedAttemptsReceived + attempts.values.reduce(0) { $0 + max(0, $1.latest - $1.start) }
    }

    mutating func record(_ event: ManagerEvent) {
        switch event {
        case .started(let id, let resumedFrom, _):
            // The previous attempt got at least as far as this one continues from.
            endAttempt(id, reachedAtLeast: resumedFrom)
            attempts[id] = (resumedFrom, resumedFrom)
            setInFlight(id, resumedFrom)
        case .progress(let id, let progress):
            attempts[id]?.latest = progress.completedBytes
            setInFlight(id, progress.completedBytes)
            if let length = progress.expectedBytes { setExpected(id, length) }
        case .completed(let info):
            endAttempt(info.id, reachedAtLeast: info.progress.completedBytes)
            setInFlight(info.id, nil)
            completed += 1
            if info.skipped {
                skipped += 1
                setExpected(info.id, 0)
            } else {
                completedBytes += info.progress.completedBytes
                setExpected(info.id, info.progress.completedBytes)
            }
        case .failed(let info):
            endAttempt(info.id, reachedAtLeast: info.progress.completedBytes)
            setInFlight(info.id, nil)
            setExpected(info.id, nil)
            failures.append(info.error ?? HaulError(.invalidState, "failed without a reason"))
        case .paused(let id, let reason?):
            // Blocked (a full disk): this run cannot finish it, so it ends as a failure here;
            // its durable bytes are kept for the next run.
            endAttempt(id, reachedAtLeast: 0)
            setInFlight(id, nil)
            setExpected(id, nil)
            failures.append(reason)
        case .groupProgress(_, let progress):
            bytesPerSecond = progress.bytesPerSecond
        default:
            break
        }
    }

    /// Counts what a running attempt received: up to its latest offset, or `offset` if the
    /// download is known to have got further (the last bytes before a failure or completion
    /// are not always in a progress event).
    private mutating func endAttempt(_ id: DownloadID, reachedAtLeast offset: Int64) {
        guard let attempt = attempts.removeValue(forKey: id) else { return }
        endedAttemptsReceived += max(0, max(attempt.latest, offset) - attempt.start)
    }

    private mutating func setInFlight(_ id: DownloadID, _ bytes: Int64?) {
        inFlightBytes += (bytes ?? 0) - (inFlight[id] ?? 0)
        inFlight[id] = bytes
    }

    private mutating func setExpected(_ id: DownloadID, _ length: Int64?) {
        expectedBytes += (length ?? 0) - (expected[id] ?? 0)
        expected[id] = length
    }
}

/// How the run ended, for the reporters' last words.
struct RunOutcome: Sendable {
    let tally: RunTally
    let status: ExitStatus
    /// The signal that stopped the run, if one did.
    let interruptedBy: Int32?
    let elapsed: Duration
}
