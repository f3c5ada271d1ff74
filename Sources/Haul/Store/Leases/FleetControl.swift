/// A client's pause, resume or cancel of a download, as a fleet carries it to whichever daemon
/// can act on it (`docs/fleet.md`, "Control through another daemon").
enum FleetControl: String, Sendable, Hashable {
    case pause
    case resume
    case cancel
}

/// What a control of a download this daemon does not hold does, decided from its row as the
/// store has it (locked) when the control arrives. A value without I/O: the store carries the
/// answer out in the same transaction (`PostgresStore.control`).
enum FleetControlPlan: Sendable, Hashable {
    /// No such download in the session.
    case unknown
    /// Refused, as a local pause, resume or cancel of a download in that state would be.
    case refused(HaulError)
    /// Nothing to do: already as asked (a paused download paused again, a queued one resumed).
    case nothing
    /// Another daemon holds the download under a live lease: the request is recorded on the
    /// row (`controlRequest`) for that owner to carry out, and the owner is woken.
    case request(FleetControl)
    /// A pause asked earlier through another daemon and not carried out yet is withdrawn (a
    /// resume): the download goes on where it runs.
    case withdraw
    /// Nobody holds the download (queued, paused, failed, or its owner died): this daemon
    /// takes a lease on it for the control alone, loads it, carries the control out as its
    /// owner would (its events, its part file, its group's check), and gives the lease back
    /// with that write.
    case takeLease

    /// A download's row as the control finds it.
    struct Row: Sendable, Hashable {
        var state: DownloadState
        /// Whether some daemon holds an unexpired lease on it.
        var held: Bool
        /// A control recorded earlier and not carried out yet.
        var pending: FleetControl?
    }

    /// The plan for `control` of the download whose row is `row` (nil: no such row).
    static func decide(_ control: FleetControl, row: Row?) -> FleetControlPlan {
        guard let row else { return .unknown }
        switch control {
        case .pause:
            switch row.state {
            case .completed, .failed, .canceled:
                return .refused(HaulError(.invalidState, "a \(row.state.rawValue) download cannot be paused"))
            case .paused:
                return .nothing
            case .queued, .running:
                guard row.held else { return .takeLease }
                if row.pending == .cancel { return .refused(HaulError(.invalidState, "the download is being canceled")) }
                return .request(.pause)
            }
        case .cancel:
            switch row.state {
            case .completed:
                return .refused(HaulError(.invalidState, "a completed download cannot be canceled"))
            case .canceled:
                return .nothing
            case .queued, .running, .paused, .failed:
                return row.held ? .request(.cancel) : .takeLease
            }
        case .resume:
            switch row.state {
            case .completed, .canceled:
                return .refused(HaulError(.invalidState, "a \(row.state.rawValue) download cannot be resumed"))
            case .queued, .running:
                // Already going (resuming twice is harmless); a pause not carried out yet is
                // taken back.
                return row.pending == .pause ? .withdraw : .nothing
            case .paused, .failed:
                // Held: another daemon is carrying out a control of it right now.
                guard !row.held else {
                    return .refused(HaulError(.invalidState, "the download is still stopping; resume it once it is paused"))
                }
                return .takeLease
            }
        }
    }
}
