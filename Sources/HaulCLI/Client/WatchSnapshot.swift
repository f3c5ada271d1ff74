/// What one refresh of `haul watch` read from the daemon.
struct WatchSnapshot: Sendable {
    /// The first page of `tellWaiting`: queued downloads in start order, then paused ones.
    var waiting: [Aria2Entry]
    /// Whether `waiting` is the whole waiting list (the page came back short).
    var waitingIsComplete: Bool
    /// `tellActive`, read after `waiting`, so that a download that started in between is in
    /// one of the two lists and the view never thinks the daemon idle while it is not.
    var active: [Aria2Entry]
    var stat: Aria2GlobalStat
    /// Downloads the view followed that are in neither list any more, as `tellStatus` saw
    /// them now: finished, usually.
    var departed: [Aria2Entry]
    /// GIDs the view followed that the daemon no longer knows (their result was removed).
    var forgotten: [String]

    init(
        waiting: [Aria2Entry] = [], waitingIsComplete: Bool = true, active: [Aria2Entry] = [], stat: Aria2GlobalStat = Aria2GlobalStat(),
        departed: [Aria2Entry] = [], forgotten: [String] = []
    ) {
        self.waiting = waiting
        self.waitingIsComplete = waitingIsComplete
        self.active = active
        self.stat = stat
        self.departed = departed
        self.forgotten = forgotten
    }

    /// Nothing is running and nothing is queued to run: paused downloads wait for a person,
    /// so they do not keep `--until-done` open. Queued downloads are listed before paused
    /// ones, so the first waiting entry tells.
    var isIdle: Bool {
        active.isEmpty && waiting.first?.status != .waiting
    }
}

/// One refresh's output: lines that stay (a download finished), and the live block below them.
struct WatchFrame: Sendable, Equatable {
    var permanent: [String]
    var block: [String]
    var isIdle: Bool
}
