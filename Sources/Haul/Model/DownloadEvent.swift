import Foundation

/// Something that happened in a session: what `DownloadSession.events()` yields, the same in
/// process (`DownloadManager`) and in the daemon (`BackgroundSession`).
///
/// ```swift
/// for try await event in session.events() {
///     switch event.kind {
///     case .finished(let result): record(result)
///     case .groupCompleted(let summary): markReady(summary.name, summary.files)
///     case .didFinishEvents: refreshUI()
///     default: break
///     }
///     try await session.acknowledge(event)
/// }
/// ```
///
/// Kept events (started, paused, resumed, finished, group completed) carry the `sequence` of
/// the session's outbox when the session keeps one (a `BackgroundSession` always does; a
/// `DownloadManager` with `Configuration.keepsEventOutbox`): they are delivered again to a
/// process that comes back until it acknowledges them. The others (queued, progress,
/// retrying) are live only, and a background session reports progress, not queued or
/// retrying: those would cost the daemon a write each for nobody.
public struct DownloadEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// A download was added and waits for a slot (in process only).
        case queued(DownloadID)
        /// A transfer got its response and began writing; `resumedFrom` is the byte offset it
        /// continued from (0 for a fresh start).
        case started(DownloadID, resumedFrom: Int64)
        /// Throttled progress of a running download; never kept, only the latest matters.
        case progress(DownloadID, TransferProgress)
        /// A transient failure; the download tries again after `delay`, resuming when the
        /// rules allow (in process only).
        case retrying(DownloadID, attempt: Int, delay: Duration, error: HaulError)
        /// The download stopped with its bytes kept: on request (`reason` nil), or because it
        /// cannot go on until someone acts (`reason`, e.g. `.diskFull`).
        case paused(DownloadID, reason: HaulError?)
        /// A paused download was queued again.
        case resumed(DownloadID)
        /// The download ended: its file, its error, or canceled.
        case finished(DownloadResult)
        /// Every member of a group has finished; the summary has each one's file or error.
        /// Replayed later, it has the members as the session keeps them then: a session keeps
        /// a group until this event is acknowledged, so only members the app removed itself
        /// are missing from it.
        case groupCompleted(GroupSummary)
        /// Every kept event the session had not delivered when the stream began (or
        /// reconnected) has been delivered: what follows is new. Once at the start of each
        /// stream, and again after a background session reconnected to a restarted daemon.
        case didFinishEvents
    }

    /// What happened.
    public let kind: Kind
    /// The event's place in the session's outbox, which `DownloadSession.acknowledge(_:)`
    /// hands back; nil for events that are not kept.
    public let sequence: Int64?

    /// An event (sessions make these; tests and previews may too).
    public init(_ kind: Kind, sequence: Int64? = nil) {
        self.kind = kind
        self.sequence = sequence
    }

    /// The download the event is about; nil for group and stream events.
    public var downloadID: DownloadID? {
        switch kind {
        case .queued(let id), .started(let id, _), .progress(let id, _), .retrying(let id, _, _, _), .paused(let id, _),
             .resumed(let id):
            return id
        case .finished(let result):
            return result.id
        case .groupCompleted, .didFinishEvents:
            return nil
        }
    }
}
