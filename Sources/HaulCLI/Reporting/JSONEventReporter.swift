import Foundation
import Haul

/// `--json`: every event as one JSON object per line on stdout, then a `summary` line.
///
/// `overallProgress` is left out: a `haul get` run is exactly one group, so it would repeat
/// `groupProgress` line for line.
final class JSONEventReporter: DownloadReporter {
    private let catalog: DownloadCatalog
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // Sorted keys: the same event always prints the same way, which diffs and logs like.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private let retry: RetryPolicy

    init(catalog: DownloadCatalog, retry: RetryPolicy) {
        self.retry = retry
        self.catalog = catalog
    }

    func handle(_ event: ManagerEvent, tally: RunTally) {
        typealias Line = JSONEventLines
        switch event {
        case .queued(let id):
            emit(Line.Queued(id: id.description, url: catalog.url(of: id)))
        case .started(let id, let resumedFrom, let finalURL):
            emit(Line.Started(id: id.description, url: catalog.url(of: id), resumedFrom: resumedFrom, finalURL: finalURL.absoluteString))
        case .checkpointed(let id, let offset):
            emit(Line.Checkpointed(id: id.description, durableOffset: offset))
        case .progress(let id, let progress):
            emit(Line.Progress(
                id: id.description, completedBytes: progress.completedBytes,
                expectedBytes: progress.expectedBytes, bytesPerSecond: progress.bytesPerSecond.rounded()))
        case .retrying(let id, let attempt, let delay, let error):
            emit(Line.Retrying(
                id: id.description, url: catalog.url(of: id), attempt: attempt,
                delaySeconds: delay.inSeconds, waiting: retry.isWaiting(beforeAttempt: attempt), error: Line.ErrorBody(error)))
        case .paused(let id, let reason):
            emit(Line.StateChange(event: "paused", id: id.description, url: catalog.url(of: id), reason: reason.map(Line.ErrorBody.init)))
        case .resumed(let id):
            emit(Line.StateChange(event: "resumed", id: id.description, url: catalog.url(of: id)))
        case .canceled(let id, _):
            emit(Line.StateChange(event: "canceled", id: id.description, url: catalog.url(of: id)))
        case .completed(let info):
            emit(Line.Completed(
                id: info.id.description, url: catalog.url(of: info.id), finalURL: info.finalURL?.absoluteString,
                path: info.fileURL?.path, bytes: info.progress.completedBytes, alreadyExisted: info.skipped,
                checksums: Dictionary(info.verifiedChecksums.map { ($0.algorithm.rawValue, $0.hex) }, uniquingKeysWith: { first, _ in first })))
        case .failed(let info):
            let error = info.error ?? HaulError(.invalidState, "failed without a reason")
            emit(Line.Failed(
                id: info.id.description, url: catalog.url(of: info.id), finalURL: info.finalURL?.absoluteString,
                attempts: info.attempts, error: Line.ErrorBody(error)))
        case .groupProgress:
            // The tally's totals: unlike the manager's, they leave failed downloads out.
            let progress = tally.progress
            emit(Line.GroupProgress(
                completedBytes: progress.completedBytes, expectedBytes: progress.expectedBytes,
                bytesPerSecond: progress.bytesPerSecond.rounded(), finished: tally.finished, total: tally.total))
        case .groupCompleted(let summary):
            emit(Line.GroupCompleted(completed: summary.completed.count, failed: summary.failed.count, canceled: summary.canceled.count))
        case .activated, .overallProgress:
            break
        }
    }

    func finish(_ outcome: RunOutcome) {
        let tally = outcome.tally
        emit(JSONEventLines.Summary(
            total: tally.total, completed: tally.completed, skipped: tally.skipped, failed: tally.failed,
            bytes: tally.completedBytes, receivedBytes: tally.receivedBytes, seconds: (outcome.elapsed.inSeconds * 1000).rounded() / 1000,
            exitCode: outcome.status.rawValue, interrupted: outcome.interruptedBy != nil,
            signal: outcome.interruptedBy.map(Self.signalName)))
    }

    private func emit(_ line: some Encodable) {
        guard let data = try? encoder.encode(line) else { return }
        StandardStream.output.writeLine(String(decoding: data, as: UTF8.self))
    }

    private static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(number)"
        }
    }
}
