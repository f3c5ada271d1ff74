extension DownloadManager {
    /// How many finished downloads (completed, failed, canceled) a session keeps, and for how
    /// long: the rule that keeps a manager's cost the same whatever its history.
    ///
    /// A finished download is forgotten (taken out of memory and deleted from the store) when
    /// more than `maxFinished` finished ones are kept, longest finished first, but never before
    /// its group has completed, so a group's summary always has every member. When a store is
    /// opened, the session's finished downloads beyond `maxFinished` (oldest added first) and
    /// those added longer than `maxAge` ago are deleted before anything is loaded.
    public struct Retention: Sendable, Hashable {
        /// Most finished downloads kept per session; nil for no bound. Default 1,000, as aria2's
        /// `--max-download-result`.
        public var maxFinished: Int?
        /// Finished downloads added longer ago than this are deleted when the store is opened;
        /// nil (the default) for no age limit. A completed download that a request made again
        /// takes in (its file still as placed) counts as added again then, once it has counted
        /// for half of this, so that a file still asked for is not forgotten.
        public var maxAge: Duration?
        /// Whether `open` loads finished downloads of earlier processes into memory, so that
        /// `downloads()` lists them. With `false` they stay in the store only, where
        /// `add(_:toGroup:continuingExisting:)` still finds one whose request is made again: a
        /// process that adds a batch and waits for it (as `haul get`) then loads only what is
        /// unfinished. Default true.
        public var loadsEarlierFinished: Bool
        /// Unfinished downloads (queued or paused) not changed for longer than this when the
        /// store is opened are canceled then (their part files deleted) and kept like other
        /// finished ones from then on; nil (the default) for never. What `haul get` needs: a
        /// download an interrupted run left behind, and that no run asked for again, would
        /// otherwise wait paused, with its part file, for ever.
        public var abandonsUnfinishedAfter: Duration?
        /// Most unacknowledged events a session's outbox keeps (with `keepsEventOutbox`); the
        /// oldest beyond it are dropped, so a client that never comes back cannot make the
        /// store grow for ever. Default 100,000.
        public var maxKeptEvents: Int

        /// A rule; every default is stated on its property (`maxKeptEvents` at least 1).
        public init(
            maxFinished: Int? = 1_000, maxAge: Duration? = nil, loadsEarlierFinished: Bool = true,
            abandonsUnfinishedAfter: Duration? = nil, maxKeptEvents: Int = 100_000
        ) {
            self.maxFinished = maxFinished.map { max(0, $0) }
            self.maxAge = maxAge
            self.loadsEarlierFinished = loadsEarlierFinished
            self.abandonsUnfinishedAfter = abandonsUnfinishedAfter
            self.maxKeptEvents = max(1, maxKeptEvents)
        }

        /// Keeps everything: what a manager did before retention existed.
        public static let keepAll = Retention(maxFinished: nil, maxAge: nil, maxKeptEvents: .max)
    }
}
