import NIOConcurrencyHelpers

/// The numbers of a running transfer that change with every chunk. The transfer task writes
/// them under a lock and the progress ticker reads them, so neither hops onto the manager per
/// chunk: progress costs one uncontended lock per buffer, not an actor round trip.
final class LiveTransfer: Sendable {
    struct Snapshot: Sendable, Hashable {
        var completedBytes: Int64 = 0
        var expectedBytes: Int64?
    }

    private let box = NIOLockedValueBox(Snapshot())

    func reset(completedBytes: Int64, expectedBytes: Int64?) {
        box.withLockedValue { $0 = Snapshot(completedBytes: completedBytes, expectedBytes: expectedBytes) }
    }

    func add(_ count: Int) {
        box.withLockedValue { $0.completedBytes += Int64(count) }
    }

    var snapshot: Snapshot { box.withLockedValue { $0 } }
}
