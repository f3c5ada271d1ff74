/// How a fleet member puts a verified file in place, so that the store, which every daemon and
/// every client reads, never calls a download completed before its file is there:
///
/// 1. the placement intent alone, fenced by the lease and not releasing it (the row stays
///    unfinished, so its group cannot complete);
/// 2. the rename, only while the lease still holds by this daemon's local deadline;
/// 3. the completion with its `completed` event, fenced and releasing, in the transaction that
///    checks the group (`DownloadManager+FleetWrites`): the group's event follows the last
///    member's own, and every member's file is in place when it is written.
///
/// An owner killed between 1 and 3 leaves an unfinished row with its intent, a lease that
/// expires, and the file either placed or still `.haul-KEY.done`. The next daemon to claim the
/// download finishes it (`finishPlacementLeftBehind`): the `.done` file is renamed by the intent,
/// under the claimer's lease; a file already placed is found by the intent's identity
/// (`reconcile`). Either way the completion is then written, releasing, as in 3: placed once,
/// its group checked once. See `docs/fleet.md`.
extension DownloadManager {
    /// The files of a placement batch whose download is still leased here and within its local
    /// deadline. A download whose lease was lost (abandoned while its intent was written) was
    /// forgotten: its file is left as it is, for the new owner. One past its local deadline is
    /// stopped as a lost lease is. One given back at shutdown ends stopped, writing nothing;
    /// its `.done` file is placed by whoever claims it next. One whose lease was lost while
    /// its intent was being written (kept for the completion's fence, `FleetState.leaseLost`)
    /// is given up the same way, its file left for the next claimer: it was not asked to
    /// stop, and ending it stopped broke the state machine's rule (a test process crashed on
    /// it in a loaded CI run).
    func placementsStillHeld(_ batch: [PendingPlacement]) -> [PendingPlacement] {
        let now = ContinuousClock.now
        return batch.filter { pending in
            let id = pending.id
            guard let fleet, let record = records[id] else { return false }
            if fleet.book.holds(id, at: now) { return true }
            if fleet.book.lease(of: id) != nil {
                configuration.logger.warning("lease past its local deadline before placing: stopping", metadata: ["haul.download": "\(id)"])
                abandon(id)
            } else if record.machine.isStopRequested {
                conclude(id, .stopped)
            } else {
                configuration.logger.warning("lease lost while placing: left to the next claimer", metadata: ["haul.download": "\(id)"])
                abandon(id, evenWhilePlacing: true)
            }
            return false
        }
    }

    /// A claimed download's row, after placing the verified file its previous owner left
    /// (`.haul-KEY.done`: killed between its placement intent and its rename), by the row's
    /// intent when it names that very file: the intent is written again fenced by `lease`,
    /// then the file is renamed, and the row gets the intent, so that `reconcile` finds it
    /// placed. Without such a file, the row as it is.
    func finishPlacementLeftBehind(_ row: StoredDownload, under lease: DownloadLease) async -> StoredDownload {
        guard !row.state.isTerminal else { return row }
        var rows = [row]
        _ = await finishInterruptedPlacements(&rows, fencedBy: lease) { _ in true }
        return rows[0]
    }
}
