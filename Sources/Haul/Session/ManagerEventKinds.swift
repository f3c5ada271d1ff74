/// Which kinds of `ManagerEvent` a subscriber follows (`DownloadManager.managerEvents(of:)`).
///
/// An event nobody follows is not built: for a batch of thousands of small files, the
/// `queued` and `started` events of each file, made and delivered to a caller that only
/// counts completions, cost as much as a part of the transfer.
package struct ManagerEventKinds: OptionSet, Sendable, Hashable {
    package let rawValue: UInt16

    package init(rawValue: UInt16) { self.rawValue = rawValue }

    package static let queued = Self(rawValue: 1 << 0)
    package static let started = Self(rawValue: 1 << 1)
    package static let checkpointed = Self(rawValue: 1 << 2)
    package static let progress = Self(rawValue: 1 << 3)
    package static let retrying = Self(rawValue: 1 << 4)
    package static let paused = Self(rawValue: 1 << 5)
    package static let resumed = Self(rawValue: 1 << 6)
    package static let completed = Self(rawValue: 1 << 7)
    package static let failed = Self(rawValue: 1 << 8)
    package static let canceled = Self(rawValue: 1 << 9)
    package static let groupProgress = Self(rawValue: 1 << 10)
    package static let groupCompleted = Self(rawValue: 1 << 11)
    package static let overallProgress = Self(rawValue: 1 << 12)
    package static let activated = Self(rawValue: 1 << 13)

    package static let all = Self(rawValue: (1 << 14) - 1)
}

extension ManagerEvent {
    /// The kind of this event, for `ManagerEventKinds` filters.
    package var kind: ManagerEventKinds {
        switch self {
        case .queued: .queued
        case .activated: .activated
        case .started: .started
        case .checkpointed: .checkpointed
        case .progress: .progress
        case .retrying: .retrying
        case .paused: .paused
        case .resumed: .resumed
        case .completed: .completed
        case .failed: .failed
        case .canceled: .canceled
        case .groupProgress: .groupProgress
        case .groupCompleted: .groupCompleted
        case .overallProgress: .overallProgress
        }
    }
}

extension DownloadManager {
    /// Like `events()`, delivering only these kinds; events of other kinds that no subscriber
    /// follows (and no outbox keeps) are not built at all.
    package nonisolated func managerEvents(of kinds: ManagerEventKinds) -> AsyncStream<ManagerEvent> {
        hub.subscribe(kinds)
    }
}
