import Foundation

/// What an app does with downloads, whether they run in its own process (`DownloadManager`)
/// or in `haul daemon` (`BackgroundSession`): code written against this protocol moves from
/// one to the other by changing the line that opens the session.
///
/// ```swift
/// let session: some DownloadSession = try await DownloadManager(identifier: "shards", stateDirectory: stateURL)
/// // let session: some DownloadSession = try await BackgroundSession(identifier: "shards")
/// let lesson = try await session.add(requests, toGroup: "lesson-42", ifPresent: .continue)
/// let summary = try await lesson.completion
/// ```
///
/// Every method throws `HaulError`. Handles (`Download`, `DownloadGroup`) are cheap values
/// that name a download or a group of the session; they can be made again at any time from an
/// ID or a name, in this process or the next.
///
/// A third implementation would sit on Apple platforms over a background
/// `URLSessionConfiguration`: `add` maps to `downloadTask(with:)` with the download ID in the
/// task's `taskDescription` (task identifiers are reused across launches; the seeds say why
/// URLs cannot be identities), groups to a kept table of IDs per name, `pause` to
/// `cancel(byProducingResumeData:)`, the handles' waits to the delegate's
/// `didFinishDownloadingTo`/`didCompleteWithError`, `events()` to those callbacks replayed
/// from the app's own outbox, and `didFinishEvents` to `urlSessionDidFinishEvents`. Checksums
/// and placement would run in the app as it wakes; the resume rules would lean on the system's
/// resume data, which is why Haul's own engine is preferred where it can run.
public protocol DownloadSession: Actor {
    /// The session's name: downloads, groups and events belong to it, and a process that opens
    /// the same identifier again finds them.
    nonisolated var identifier: String { get }

    /// Validates and queues one download, and returns its handle. Throws for a bad URL,
    /// scheme, file name or header, or a destination directory that is missing or not
    /// writable; nothing is queued then.
    func add(_ request: DownloadRequest) async throws(HaulError) -> Download

    /// Validates every request, then queues them all as one group named `name` (or none, if
    /// any is invalid), in one store transaction; adding to an existing name extends that
    /// group. `policy` says what happens to a request already made in this session (same
    /// URL, directory, file name and checksums): `.continue` it, or `.addAnew`.
    func add(_ requests: [DownloadRequest], toGroup name: String, ifPresent policy: ExistingDownloadPolicy) async throws(HaulError) -> DownloadGroup

    /// Adds a resource made of shards as one group in `directory`: an HLS playlist (every
    /// segment, initialization section and key of one variant and its renditions, and a local
    /// playlist that plays offline) or a Metalink 4 document (its files from their mirrors, with
    /// their hashes and piece hashes checked). `source` is an http(s) URL, or a local file in
    /// process. The session runs the finishing step when the group completes, whether or not
    /// the app is still there. Throws for a document it refuses (live playlists, URIs that leave
    /// the directory, documents over the limits in `docs/playlists.md`).
    func addResource(_ source: URL, toGroup name: String, in directory: URL, options: ResourceOptions) async throws(HaulError) -> DownloadGroup

    /// The handle of a download of this session; throws `.unknownDownload` when there is none.
    func download(_ id: DownloadID) async throws(HaulError) -> Download

    /// The handle of a group of this session; throws `.unknownGroup` when there is none.
    func group(named name: String) async throws(HaulError) -> DownloadGroup

    /// Every download of the session, in the order they were added. Finished ones stay listed
    /// until the retention rule forgets them (`DownloadManager.Retention`), and never before
    /// their completion events were acknowledged in a session that keeps events.
    func downloads() async throws(HaulError) -> [DownloadInfo]

    /// A snapshot of one download; throws `.unknownDownload` when there is none.
    func info(_ id: DownloadID) async throws(HaulError) -> DownloadInfo

    /// Stops a download, keeping its bytes and resume state; returns once it has stopped.
    func pause(_ id: DownloadID) async throws(HaulError)

    /// Queues a paused (or failed) download again; it continues from its bytes when the
    /// resume rules allow.
    func resume(_ id: DownloadID) async throws(HaulError)

    /// Stops a download for good and deletes its part file; returns once it has stopped.
    func cancel(_ id: DownloadID) async throws(HaulError)

    /// Cancels the download if it has not finished, then forgets it; with `deletingFile`, a
    /// completed download's file is deleted too, if it is still the file Haul placed.
    func remove(_ id: DownloadID, deletingFile: Bool) async throws(HaulError)

    /// Gives the session up deliberately (like iOS's force quit): queued downloads are
    /// canceled, running ones stopped with their bytes kept (paused), paused ones left alone.
    func invalidateAndCancel() async throws(HaulError)

    /// The session's events: every kept event not yet acknowledged, in order, then
    /// `.didFinishEvents`, then new events as they happen. Each call is an independent stream.
    nonisolated func events() -> HaulSequence<DownloadEvent>

    /// The app has handled `event` and everything kept before it: they are not delivered
    /// again, and the downloads and groups they finished may now be forgotten by the
    /// retention rule. Does nothing for events that are not kept (`sequence` nil).
    func acknowledge(_ event: DownloadEvent) async throws(HaulError)

    /// Lets go of the session in this process. `DownloadManager` stops its transfers (keeping
    /// part files and checkpoints for the next run); `BackgroundSession` closes its connection
    /// and its downloads go on in the daemon.
    func close() async
}

extension DownloadSession {
    /// Cancels the download if it has not finished, then forgets it; its file, if placed,
    /// stays.
    public func remove(_ id: DownloadID) async throws(HaulError) {
        try await remove(id, deletingFile: false)
    }
}

/// What `DownloadSession.add(_:toGroup:ifPresent:)` does with a request the session already
/// has a download for (same URL, directory, file name and checksums).
public enum ExistingDownloadPolicy: Sendable, Hashable {
    /// Continue it rather than fetch it again: a queued or running download joins the group
    /// and goes on; a paused or failed one joins and is resumed from its bytes; a completed
    /// one whose file is still as placed joins as completed (its `finished` event comes again).
    /// A completed one whose file changed or went since, or a canceled one, is added anew.
    /// What a program that restarts and asks for the same batch again wants.
    case `continue`
    /// Add a new download for every request, whatever the session has already.
    case addAnew
}
