import Haul

/// Output for pipes, files and `-q`: one line per finished download and a summary, no
/// escape sequences, nothing that needs redrawing.
///
/// Successes go to stdout (`done PATH (N bytes)`, `skipped PATH`); failures and retries go to
/// stderr, so that `haul get … > list` keeps the list clean. `-q` keeps only the failures.
final class PlainReporter: DownloadReporter {
    private let catalog: DownloadCatalog
    private let quiet: Bool
    private let retry: RetryPolicy

    init(catalog: DownloadCatalog, quiet: Bool, retry: RetryPolicy) {
        self.catalog = catalog
        self.quiet = quiet
        self.retry = retry
    }

    func handle(_ event: ManagerEvent, tally: RunTally) {
        switch event {
        case .completed(let info):
            guard !quiet else { return }
            let path = catalog.displayPath(of: info.id, fileURL: info.fileURL)
            StandardStream.output.writeLine(Self.completedLine(info, path: path))
        case .failed(let info):
            StandardStream.error.writeLine(Self.failedLine(info, url: catalog.url(of: info.id)))
        case .paused(let id, let reason?):
            StandardStream.error.writeLine(Self.blockedLine(url: catalog.url(of: id), reason: reason))
        case .retrying(let id, let attempt, let delay, let error):
            guard !quiet else { return }
            StandardStream.error.writeLine(Self.retryingLine(
                url: catalog.url(of: id), attempt: attempt, delay: delay, error: error, waiting: retry.isWaiting(beforeAttempt: attempt)))
        default:
            break
        }
    }

    func finish(_ outcome: RunOutcome) {
        guard !quiet else { return }
        StandardStream.output.writeLine(Self.summaryLine(outcome))
    }

    // MARK: Lines shared with the terminal reporter

    static func completedLine(_ info: DownloadInfo, path: String) -> String {
        info.skipped ? "skipped \(path)" : "done \(path) (\(info.progress.completedBytes) bytes)"
    }

    static func failedLine(_ info: DownloadInfo, url: String) -> String {
        "failed \(url): \(info.error?.message ?? "unknown error")"
    }

    /// Says nothing of bytes kept: a download stopped before its first byte (a disk full at
    /// the part file's creation) has none, and the next run continues from what there is.
    static func blockedLine(url: String, reason: HaulError) -> String {
        "stopped \(url): \(reason.message) (run the same command again to continue where it stopped)"
    }

    /// `retrying URL in 2.0 s (attempt 3): REASON`, or once the quick retries are used up,
    /// `waiting for URL: REASON; trying again in 40 s (attempt 9)`.
    static func retryingLine(url: String, attempt: Int, delay: Duration, error: HaulError, waiting: Bool) -> String {
        if waiting {
            return "waiting for \(url): \(error.message); trying again in \(HumanReadable.seconds(delay)) (attempt \(attempt))"
        }
        return "retrying \(url) in \(HumanReadable.seconds(delay)) (attempt \(attempt)): \(error.message)"
    }

    /// `finished: 3 done (1 skipped), 1 failed of 4; 12.0 MiB received in 1.25 s`: the bytes
    /// received in this run, of completed downloads and of the others.
    static func summaryLine(_ outcome: RunOutcome) -> String {
        let tally = outcome.tally
        let verb = outcome.interruptedBy == nil ? "finished" : "interrupted"
        var counts = "\(tally.completed) done"
        if tally.skipped > 0 { counts += " (\(tally.skipped) skipped)" }
        counts += ", \(tally.failed) failed"
        let unfinished = tally.total - tally.finished
        if unfinished > 0 { counts += ", \(unfinished) unfinished" }
        return "\(verb): \(counts) of \(tally.total); \(HumanReadable.bytes(tally.receivedBytes)) received in \(HumanReadable.seconds(outcome.elapsed))"
    }
}
