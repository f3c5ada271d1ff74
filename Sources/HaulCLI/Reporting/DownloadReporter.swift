import Haul

/// Shows a run's events to the user in one of the output modes.
///
/// Reporters are owned by the run loop's task and called from it only, one event at a time,
/// so they keep plain mutable state without locks.
protocol DownloadReporter: AnyObject {
    /// Called for every event, after `tally` has counted it.
    func handle(_ event: ManagerEvent, tally: RunTally)
    /// Called once, after the manager has shut down and every event was handled.
    func finish(_ outcome: RunOutcome)
}

/// The output modes of `haul get`.
enum OutputMode: Sendable, Hashable {
    /// Live progress redrawn in place: stdout is a terminal.
    case terminal
    /// One line per finished download and a summary: stdout is a pipe or file.
    case plain
    /// Errors only (`-q`).
    case quiet
    /// One JSON object per event (`--json`).
    case json

    /// The events the run follows in this mode. `-q` shows failures only and prints no
    /// summary, so it asks for what decides the outcome and nothing else: the manager then
    /// builds no `queued`, `started` or progress event for each of thousands of files.
    var followedEvents: ManagerEventKinds {
        self == .quiet ? [.retrying, .paused, .completed, .failed, .canceled, .groupCompleted] : .all
    }

    static func choose(quiet: Bool, json: Bool, stdoutIsTerminal: Bool) -> OutputMode {
        if json { return .json }
        if quiet { return .quiet }
        return stdoutIsTerminal ? .terminal : .plain
    }

    /// `retry` is the run's policy, which tells a quick retry from a wait for a server that is gone.
    func makeReporter(catalog: DownloadCatalog, retry: RetryPolicy) -> any DownloadReporter {
        switch self {
        case .terminal: TerminalProgressReporter(catalog: catalog, columns: StandardStream.output.columns, retry: retry)
        case .plain: PlainReporter(catalog: catalog, quiet: false, retry: retry)
        case .quiet: PlainReporter(catalog: catalog, quiet: true, retry: retry)
        case .json: JSONEventReporter(catalog: catalog, retry: retry)
        }
    }
}
