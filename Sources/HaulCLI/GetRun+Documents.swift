import Foundation
import Haul

/// `haul get`'s playlists and Metalink documents: planned once the store is open (they are
/// fetched through the manager's own client, with its proxy and TLS settings), added with the
/// plain URLs as one group, and finished (local playlists written, segments joined, Metalink
/// pieces checked and files placed) when that group completes. A re-run after an interruption
/// plans the same files, continues them, and finishes.
extension GetRun {
    struct Documents: Sendable {
        /// Arguments that are documents by `--hls`/`--metalink` or their extension.
        var forced: [(String, ResourcePlan.Kind)] = []
        /// URL arguments without an extension: a document if the server's content type says so.
        var probes: Set<String> = []
        var directory: URL = URL(fileURLWithPath: ".", isDirectory: true)
        var hls = HLSOptions()

        var isEmpty: Bool { forced.isEmpty && probes.isEmpty }
    }

    /// The plans of the documents, and the plain requests left (a probed URL that turned out
    /// to be a document is no longer a plain download).
    func planDocuments(_ manager: DownloadManager) async throws(HaulError) -> (resources: [ResourcePlan], plain: [DownloadRequest]) {
        var resources: [ResourcePlan] = []
        var plain = plan.requests
        for (source, kind) in documents.forced {
            resources.append(try await manager.planResource(source, kind: kind, directory: documents.directory, hls: documents.hls))
        }
        for source in documents.probes.sorted() {
            // Asked with the headers the plain download would send (its netrc credentials too).
            var hls = documents.hls
            if let request = plain.first(where: { $0.url.absoluteString == source }) { hls.headers = request.headers }
            guard let resource = try await manager.probeResource(source, directory: documents.directory, hls: hls) else { continue }
            resources.append(resource)
            plain.removeAll { $0.url.absoluteString == source }
        }
        return (resources, plain)
    }

    /// Records the live playlists among `resources` (`--hls-record`), all at once, until each
    /// ends or stops at its limit; the plans with their local playlists, and the first error
    /// (a reload that failed after its retries). What was recorded is finished either way.
    static func record(
        _ resources: [ResourcePlan], group: String, manager: DownloadManager, quiet: Bool
    ) async -> (resources: [ResourcePlan], error: HaulError?) {
        await withTaskGroup(of: (Int, DownloadManager.RecordingOutcome).self) { tasks in
            for (index, resource) in resources.enumerated() where resource.live != nil {
                tasks.addTask {
                    let outcome = await manager.recordResource(resource, toGroup: group) { count in
                        if !quiet { StandardStream.error.writeLine("recording \(resource.source): \(count) segments") }
                    }
                    return (index, outcome)
                }
            }
            var resources = resources
            var firstError: HaulError?
            for await (index, outcome) in tasks {
                resources[index] = outcome.plan
                if let error = outcome.error {
                    StandardStream.error.writeLine("haul: error: \(outcome.plan.source): \(error.message)")
                    firstError = firstError ?? error
                } else if outcome.stopReason == .limit, !quiet {
                    StandardStream.error.writeLine("recording \(outcome.plan.source): stopped at the limit, \(outcome.plan.duration.map { String(format: "%.1f", $0) } ?? "?") s recorded")
                }
            }
            return (resources, firstError)
        }
    }

    /// Runs every resource's finishing step; the errors, one per resource that failed.
    static func finish(_ resources: [ResourcePlan], manager: DownloadManager, quiet: Bool) async -> [HaulError] {
        var errors: [HaulError] = []
        for resource in resources {
            do {
                try await manager.finishResource(resource)
                if !quiet, let entry = resource.entryName {
                    let what = resource.kind == .hls ? "playlist" : "Metalink"
                    var line = "\(what) ready: \(resource.directory.appendingPathComponent(entry).path)"
                    for join in resource.joins { line += "\njoined: \(resource.directory.appendingPathComponent(join.output).path)" }
                    StandardStream.error.writeLine(line)
                }
            } catch {
                StandardStream.error.writeLine("haul: error: \(resource.source): \(error.message)")
                errors.append(error)
            }
        }
        return errors
    }
}
