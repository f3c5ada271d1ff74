import Foundation

/// Recording a live HLS playlist until it ends: the I/O around `LiveRecorder` and
/// `LiveRecording`, which decide everything.
extension DownloadManager {
    /// What `recordResource` ended with.
    package struct RecordingOutcome: Sendable {
        /// The plan with its finishing step complete (the local playlist of what was recorded,
        /// ended), whatever stopped the recording.
        package var plan: ResourcePlan
        /// Why it stopped: the playlist ended, or a limit was reached; nil after an error.
        package var stopReason: LiveRecording.StopReason?
        /// The reload or add that failed after its retries, or the manager shutting down.
        package var error: HaulError?
    }

    /// Reloads the live playlist of `plan` (`plan.live`, planned with `HLSOptions.record`) as
    /// RFC 8216 asks, adds the segments that appear to the group `name` (which already holds
    /// the plan's first segments), and returns when the playlist ended, a limit was reached, a
    /// reload failed after the retries of `Configuration.retry`, or the manager shut down. The
    /// group cannot complete while this runs; it may once it returns.
    ///
    /// `progress` is told the number of segments recorded after each load that found new ones.
    package func recordResource(
        _ plan: ResourcePlan, toGroup name: String, progress: @escaping @Sendable (Int) -> Void = { _ in }
    ) async -> RecordingOutcome {
        guard var recorder = plan.live else { return RecordingOutcome(plan: plan) }
        holdGroupOpen(name)
        defer { releaseGroupHold(name) }
        var failures = 0
        var delay: Duration
        switch recorder.next {
        case .stop(let reason): return RecordingOutcome(plan: recorder.finishedPlan(plan), stopReason: reason)
        case .reload(let after): delay = after
        }
        let headers = HTTPTransport.headers(recorder.options.headers, from: URL(string: plan.source) ?? recorder.playlistURL, to: recorder.playlistURL)
        while true {
            try? await Task.sleep(for: delay)
            guard !isShutDown, !Task.isCancelled else {
                return RecordingOutcome(plan: recorder.finishedPlan(plan), error: HaulError(.shutdown, "recording stopped: the download manager was shut down"))
            }
            let document: FetchedDocument
            do {
                document = try await transport.fetchDocument(recorder.playlistURL, headers: headers, limit: recorder.options.limits.maxDocumentBytes)
                failures = 0
            } catch {
                failures += 1
                guard let retry = configuration.retry.delay(after: error, nextAttempt: failures + 1, jitter: .random(in: 0...1)) else {
                    return RecordingOutcome(plan: recorder.finishedPlan(plan), error: HaulError(error.code, "recording stopped: \(error.message)", httpStatus: error.httpStatus))
                }
                delay = retry
                continue
            }
            do throws(HaulError) {
                guard case .media(let playlist) = try PlaylistParser.parse(document.body, limits: recorder.options.limits) else {
                    throw HaulError(.invalidResponse, "\(recorder.playlistURL.absoluteString) became a master playlist")
                }
                let requests = try recorder.take(playlist, directory: plan.directory)
                if !requests.isEmpty {
                    try Self.makeDirectories(for: requests)
                    try await addContinuing(requests, toGroup: name)
                    progress(recorder.recording.segments.count)
                }
            } catch {
                return RecordingOutcome(plan: recorder.finishedPlan(plan), error: HaulError(error.code, "recording stopped: \(error.message)"))
            }
            switch recorder.next {
            case .stop(let reason): return RecordingOutcome(plan: recorder.finishedPlan(plan), stopReason: reason)
            case .reload(let after): delay = after
            }
        }
    }
}
