import Haul

/// Live progress on a terminal: a block of lines (one per running download, at most
/// `maxDownloadLines`, then a total line) redrawn in place with ANSI escapes each time the
/// manager reports group progress (every `progressInterval`), with finished downloads printed
/// above it as permanent lines.
///
/// Cheap with thousands of files: events update O(1) state, and a redraw formats only the
/// running downloads (never more than the concurrency limit) and the tally.
final class TerminalProgressReporter: DownloadReporter {
    static let maxDownloadLines = 10

    private let catalog: DownloadCatalog
    private let formatter: ProgressLineFormatter
    /// Running downloads in the order they started.
    private var running: [DownloadID] = []
    private var progress: [DownloadID: TransferProgress] = [:]
    /// Permanent lines waiting for the next redraw, with the stream each belongs on.
    private var pending: [(stream: StandardStream, line: String)] = []
    /// How many lines of the block are on the screen now.
    private var drawnLines = 0

    private let retry: RetryPolicy

    init(catalog: DownloadCatalog, columns: Int, retry: RetryPolicy) {
        self.retry = retry
        self.catalog = catalog
        self.formatter = ProgressLineFormatter(columns: columns)
    }

    func handle(_ event: ManagerEvent, tally: RunTally) {
        switch event {
        case .started(let id, let resumedFrom, _):
            if progress[id] == nil { running.append(id) }
            progress[id] = TransferProgress(completedBytes: resumedFrom)
        case .progress(let id, let value):
            if progress[id] != nil { progress[id] = value }
        case .retrying(let id, let attempt, let delay, let error):
            pending.append((.error, PlainReporter.retryingLine(
                url: catalog.url(of: id), attempt: attempt, delay: delay, error: error, waiting: retry.isWaiting(beforeAttempt: attempt))))
        case .completed(let info):
            stopShowing(info.id)
            let path = catalog.displayPath(of: info.id, fileURL: info.fileURL)
            pending.append((.output, PlainReporter.completedLine(info, path: path)))
        case .failed(let info):
            stopShowing(info.id)
            pending.append((.error, PlainReporter.failedLine(info, url: catalog.url(of: info.id))))
        case .paused(let id, let reason?):
            stopShowing(id)
            pending.append((.error, PlainReporter.blockedLine(url: catalog.url(of: id), reason: reason)))
        case .paused(let id, nil), .canceled(let id, _):
            stopShowing(id)
        case .groupProgress:
            redraw(block: block(tally: tally))
        default:
            break
        }
    }

    func finish(_ outcome: RunOutcome) {
        redraw(block: [])
        StandardStream.output.writeLine(PlainReporter.summaryLine(outcome))
    }

    private func stopShowing(_ id: DownloadID) {
        guard progress.removeValue(forKey: id) != nil else { return }
        running.removeAll { $0 == id }
    }

    private func block(tally: RunTally) -> [String] {
        var lines = running.prefix(Self.maxDownloadLines).map { id in
            formatter.downloadLine(name: catalog.name(of: id), progress: progress[id] ?? TransferProgress())
        }
        if running.count > Self.maxDownloadLines {
            lines.append(formatter.moreLine(running.count - Self.maxDownloadLines))
        }
        lines.append(formatter.totalLine(tally: tally))
        return lines
    }

    /// Erases the block on screen, prints the pending permanent lines, draws `block`.
    private func redraw(block: [String]) {
        // Cursor up over the old block, to column 0, clear to the end of the screen.
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A\r\u{1B}[J" : ""
        for (stream, line) in pending {
            if stream.descriptor == StandardStream.output.descriptor {
                text += line + "\n"
            } else {
                // Keep the order on screen: what is queued for stdout first, then stderr.
                StandardStream.output.write(text)
                text = ""
                stream.writeLine(line)
            }
        }
        pending = []
        for line in block { text += line + "\n" }
        StandardStream.output.write(text)
        drawnLines = block.count
    }
}
