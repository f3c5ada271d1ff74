import Foundation

/// Pausing and resuming everything at once (aria2's `pauseAll`, `unpauseAll`).
extension DownloadManager {
    /// Pauses every queued and running download, keeping bytes and resume state, and returns
    /// once all of them have stopped. Admission is suspended meanwhile, so that no slot a
    /// stopping download frees (and no group a paused one ends) starts a download on the way.
    /// All keep their places in the queue; those that ran (waiting for their server included)
    /// go to the front, in the order they were added.
    package func pauseAll() async {
        admissionSuspended = true
        defer {
            admissionSuspended = false
            admitQueued()
        }
        var stopping: [DownloadID] = []
        var ran: Set<DownloadID> = []
        var elsewhere: [DownloadID] = []
        for id in order {
            // In a fleet, what this daemon does not hold is paused through the store (below):
            // its view of such a download may be older than the row.
            guard controlsLocally(id) else {
                if records[id]?.machine.publicState.isTerminal == false { elsewhere.append(id) }
                continue
            }
            guard let found = records.update(id, { $0.machine.pauseAllRequested() }), let step = found else { continue }
            perform(step.action, for: id)
            if step.ran { ran.insert(id) }
            if step.awaitsStop { stopping.append(id) }
        }
        if fleet != nil {
            elsewhere += await downloadsElsewhere(inStates: [.queued, .running]).map(\.id)
            await pauseThroughFleet(elsewhere)
        }
        for id in stopping { await waitUntilStopped(id) }
        // Each went to the front of its priority as it stopped, in whatever order they
        // stopped; as a batch they take the front in the order they were added.
        for id in order.reversed() where ran.contains(id) && scheduler.isHeld(id) {
            guard let record = records[id] else { continue }
            scheduler.dequeue(id)
            enqueueForScheduling(record, held: true, atFront: true)
        }
    }

    /// Queues every paused download again (not failed ones), in the order they were added,
    /// and returns their IDs. In a fleet, every paused download of the session, wherever it
    /// was paused: those held here as on one daemon, the others (as their rows say) through
    /// the store, one transaction each, for any daemon to claim.
    @discardableResult
    package func resumeAllPaused() async -> [DownloadID] {
        guard fleet != nil else {
            let paused = order.filter { records[$0]?.machine.state == .paused }
            for id in paused { try? resume(id) }
            return paused
        }
        var resumed: [DownloadID] = []
        var elsewhere: [DownloadID] = []
        for info in await downloadsInFleet() where info.state == .paused {
            guard controlsLocally(info.id) else {
                elsewhere.append(info.id)
                continue
            }
            if (try? resumeHere(info.id)) != nil { resumed.append(info.id) }
        }
        for id in elsewhere {
            do throws(HaulError) {
                try await controlThroughFleet(.resume, id)
                resumed.append(id)
            } catch {
                // Resumed or ended meanwhile through another daemon: nothing to do.
                if error.code != .invalidState { log(.warning, "resuming failed: \(error.message)", id, error: error) }
            }
        }
        return resumed
    }
}
