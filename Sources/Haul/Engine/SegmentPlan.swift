/// One byte range of a segmented download as the store keeps it: bytes `start..<durableOffset`
/// are in the part file and were flushed before this was recorded; `durableOffset..<end` are
/// still to fetch. The segments of a download cover `0..<length` without gaps or overlaps.
struct DurableSegment: Sendable, Hashable, Codable {
    var start: Int64
    var end: Int64
    var durableOffset: Int64

    init(start: Int64, end: Int64, durableOffset: Int64) {
        self.start = start
        self.end = end
        self.durableOffset = durableOffset
    }
}

/// How one download is split over several connections, and how far each part has come.
///
/// A value type whose methods are the events of a segmented transfer (a connection asks for
/// work, reserves room for a buffer, has written it, gives its segment back; a checkpoint made
/// bytes durable), so that splitting and tail stealing are tested without I/O. The transfer
/// keeps one behind a lock and calls these from its connections.
///
/// Tail stealing: a connection that finds no unclaimed segment takes the upper half of the
/// segment with the most bytes left; that segment's owner stops at the new end. So the last
/// bytes of a download are never left to one slow connection, and it does not crawl at 99%.
/// A steal leaves the victim half; when the victim is not slow but stalled (the server stopped
/// sending), an idle connection takes over all of its rest instead (`takeOver`).
///
/// Offsets within a segment only grow: `start <= durable <= written <= reserved <= end`.
/// `reserved` runs ahead of `written` by the buffer being written, so that a steal never
/// splits a segment below bytes its owner is about to write.
struct SegmentPlan: Sendable, Hashable {
    struct Segment: Sendable, Hashable {
        let start: Int64
        /// Exclusive; lowered when the upper part is stolen.
        var end: Int64
        var reserved: Int64
        var written: Int64
        var durable: Int64
        /// The connection fetching it, nil when nobody is.
        var owner: Int?

        var isFinished: Bool { written == end }
        /// Bytes not yet handed to the owner's writes.
        var unreserved: Int64 { end - reserved }
    }

    /// Bytes `from..<to` of the segment starting at `segmentStart`, for one connection to fetch.
    struct Assignment: Sendable, Hashable {
        var segmentStart: Int64
        var from: Int64
        var to: Int64
    }

    /// Where a connection may write the buffer it received, and how much of it.
    struct Reservation: Sendable, Hashable {
        var position: Int64
        /// Bytes of the buffer that belong to the segment; fewer than offered when its end
        /// was reached (or lowered by a steal), 0 when nothing more belongs to it.
        var count: Int
    }

    let totalLength: Int64
    /// A steal takes at least this many bytes (it costs a new request).
    var minStealSize: Int64
    /// Sorted by start; together they cover `0..<totalLength` exactly.
    private(set) var segments: [Segment]

    /// A split of `totalLength` bytes into at most `connections` segments of at least
    /// `minSegmentSize` bytes; nil when that leaves fewer than two (one connection then).
    ///
    /// With `written`, bytes `0..<written` are already in the part file (a download that ran
    /// with one connection until now): the rest is cut into equal parts, and the first segment
    /// starts at 0 with those bytes written. They count as durable only once a checkpoint has
    /// flushed them again, so a record made before that never claims more than before.
    static func split(
        totalLength: Int64, written: Int64 = 0, connections: Int, minSegmentSize: Int64, minStealSize: Int64
    ) -> SegmentPlan? {
        guard connections >= 2, totalLength > 0, written >= 0, written < totalLength else { return nil }
        let remaining = totalLength - written
        let count = Int(min(Int64(connections), remaining / max(1, minSegmentSize)))
        guard count >= 2 else { return nil }
        let size = remaining / Int64(count)
        let segments = (0..<count).map { index -> Segment in
            let start = index == 0 ? 0 : written + Int64(index) * size
            let end = index == count - 1 ? totalLength : written + Int64(index + 1) * size
            let next = index == 0 ? written : start
            return Segment(start: start, end: end, reserved: next, written: next, durable: start, owner: nil)
        }
        return SegmentPlan(totalLength: totalLength, minStealSize: minStealSize, segments: segments)
    }

    /// The plan recorded by an earlier process: each segment continues from its durable
    /// offset. Nil unless the segments cover `0..<totalLength` exactly, in order, each with
    /// its offset inside it: a record that does not add up is not trusted with any byte.
    init?(resuming recorded: [DurableSegment], totalLength: Int64, minStealSize: Int64) {
        guard !recorded.isEmpty, totalLength > 0 else { return nil }
        var expectedStart: Int64 = 0
        for segment in recorded {
            guard segment.start == expectedStart, segment.end > segment.start,
                  segment.durableOffset >= segment.start, segment.durableOffset <= segment.end
            else { return nil }
            expectedStart = segment.end
        }
        guard expectedStart == totalLength else { return nil }
        self.init(totalLength: totalLength, minStealSize: minStealSize, segments: recorded.map {
            Segment(start: $0.start, end: $0.end, reserved: $0.durableOffset, written: $0.durableOffset,
                    durable: $0.durableOffset, owner: nil)
        })
    }

    private init(totalLength: Int64, minStealSize: Int64, segments: [Segment]) {
        self.totalLength = totalLength
        self.minStealSize = max(1, minStealSize)
        self.segments = segments
    }

    // MARK: Reading

    var isComplete: Bool { segments.allSatisfy(\.isFinished) }

    /// Bytes in the part file, all segments together.
    var writtenBytes: Int64 { segments.reduce(0) { $0 + ($1.written - $1.start) } }

    /// The unfinished segment with the lowest start: where a resumed download asks first.
    var firstUnfinished: Segment? { segments.first { !$0.isFinished } }

    /// Bytes `0..<n` that are written without a gap.
    var contiguousWrittenPrefix: Int64 {
        var prefix: Int64 = 0
        for segment in segments {
            prefix = segment.written
            guard segment.isFinished else { break }
        }
        return prefix
    }

    /// Bytes `0..<n` that are durable without a gap: what the single-connection rules may
    /// trust (the store's `durableOffset`).
    var contiguousDurablePrefix: Int64 { durableSegments.first?.durableOffset ?? 0 }

    /// The durable state to record, with every fully durable segment merged into the next
    /// (bytes `start..<durableOffset` stay exactly the durable ones), so that few rows are kept.
    var durableSegments: [DurableSegment] {
        var result: [DurableSegment] = []
        result.reserveCapacity(segments.count)
        for segment in segments {
            if let last = result.last, last.durableOffset == last.end {
                result[result.count - 1].end = segment.end
                result[result.count - 1].durableOffset = segment.durable
            } else {
                result.append(DurableSegment(start: segment.start, end: segment.end, durableOffset: segment.durable))
            }
        }
        return result
    }

    func segment(startingAt start: Int64) -> Segment? {
        index(of: start).map { segments[$0] }
    }

    // MARK: Events

    /// Work for `connection`, which owns no segment: an unclaimed unfinished segment (the one
    /// starting at `preferredStart` if that is one, else the lowest), or else the upper half
    /// of the segment with the most bytes left, if that half is at least `minStealSize`.
    /// Nil when there is nothing worth taking: the connection is done.
    mutating func assign(to connection: Int, preferring preferredStart: Int64? = nil) -> Assignment? {
        precondition(!segments.contains { $0.owner == connection }, "connection \(connection) already owns a segment")
        let unclaimed = segments.indices.filter { segments[$0].owner == nil && !segments[$0].isFinished }
        if let index = unclaimed.first(where: { segments[$0].start == preferredStart }) ?? unclaimed.first {
            segments[index].owner = connection
            segments[index].reserved = segments[index].written
            return Assignment(segmentStart: segments[index].start, from: segments[index].written, to: segments[index].end)
        }
        guard let victim = segments.indices.filter({ segments[$0].owner != nil })
            .max(by: { segments[$0].unreserved < segments[$1].unreserved }),
            segments[victim].unreserved >= 2 * minStealSize
        else { return nil }
        let end = segments[victim].end
        let middle = segments[victim].reserved + segments[victim].unreserved / 2
        segments[victim].end = middle
        segments.insert(
            Segment(start: middle, end: end, reserved: middle, written: middle, durable: middle, owner: connection),
            at: victim + 1)
        return Assignment(segmentStart: middle, from: middle, to: end)
    }

    /// Takes the rest of `victim`'s segment for `connection`, which owns none, however small
    /// that rest is: what an idle connection does when the victim has received nothing for too
    /// long (a stalled server), where a steal would leave the victim the lower half.
    ///
    /// The victim keeps what it has reserved, so that a write it is about to make still lands
    /// in its own segment; when it has reserved nothing of the segment, the whole segment
    /// changes owner and every later event of the victim for it is ignored. Nil when the
    /// victim owns no segment with unreserved bytes.
    mutating func takeOver(from victim: Int, by connection: Int) -> Assignment? {
        precondition(!segments.contains { $0.owner == connection }, "connection \(connection) already owns a segment")
        guard let index = segments.firstIndex(where: { $0.owner == victim && $0.unreserved > 0 }) else { return nil }
        let segment = segments[index]
        guard segment.reserved > segment.start else {
            segments[index].owner = connection
            return Assignment(segmentStart: segment.start, from: segment.reserved, to: segment.end)
        }
        segments[index].end = segment.reserved
        segments.insert(
            Segment(start: segment.reserved, end: segment.end, reserved: segment.reserved, written: segment.reserved,
                    durable: segment.reserved, owner: connection),
            at: index + 1)
        return Assignment(segmentStart: segment.reserved, from: segment.reserved, to: segment.end)
    }

    /// Which connection owns a segment with bytes nobody has reserved yet (the candidates for
    /// `takeOver`), and how many such bytes.
    var ownersWithUnreservedBytes: [(connection: Int, unreserved: Int64)] {
        segments.compactMap { segment in
            guard let owner = segment.owner, segment.unreserved > 0 else { return nil }
            return (owner, segment.unreserved)
        }
    }

    /// Reserves room for up to `count` received bytes of the segment starting at `start`, at
    /// its next unwritten position; the owner writes exactly the reserved bytes, then commits.
    /// Nothing is reserved for a connection that no longer owns the segment (taken over).
    mutating func reserve(_ count: Int, inSegmentStartingAt start: Int64, by connection: Int) -> Reservation {
        guard let index = index(of: start), segments[index].owner == connection else { return Reservation(position: start, count: 0) }
        let position = segments[index].reserved
        let allowed = Int(min(Int64(count), segments[index].end - position))
        segments[index].reserved += Int64(allowed)
        return Reservation(position: position, count: allowed)
    }

    /// The reserved bytes were written to the part file.
    mutating func commit(_ count: Int, inSegmentStartingAt start: Int64, by connection: Int) {
        guard let index = index(of: start), segments[index].owner == connection else { return }
        segments[index].written = min(segments[index].written + Int64(count), segments[index].reserved)
    }

    /// The owner stops fetching the segment (finished, failed, or stopped): bytes it reserved
    /// and did not write are given back, and another connection may take the rest. A
    /// connection whose segment was taken over whole releases nothing.
    mutating func release(segmentStartingAt start: Int64, by connection: Int) {
        guard let index = index(of: start), segments[index].owner == connection else { return }
        segments[index].owner = nil
        segments[index].reserved = segments[index].written
        compact()
    }

    /// Every segment's written offset now: taken just before a flush of the part file.
    var writtenOffsets: [DurableSegment] {
        segments.map { DurableSegment(start: $0.start, end: $0.end, durableOffset: $0.written) }
    }

    /// The part file was flushed after `offsets` were taken: those bytes are durable.
    mutating func markDurable(_ offsets: [DurableSegment]) {
        for offset in offsets {
            guard let index = index(of: offset.start) else { continue }
            segments[index].durable = max(segments[index].durable, min(offset.durableOffset, segments[index].written))
        }
        compact()
    }

    /// Every segment is unclaimed and its written bytes count as durable: for a plan taken
    /// over by a later attempt in the same process (the bytes are in the file; a new flush
    /// comes with the next checkpoint).
    mutating func releaseAll() {
        for index in segments.indices {
            segments[index].owner = nil
            segments[index].reserved = segments[index].written
        }
    }

    // MARK: Private

    /// Merges neighbours that are unclaimed and wholly durable, so that lookups stay short.
    private mutating func compact() {
        var index = 0
        while index + 1 < segments.count {
            let left = segments[index]
            let right = segments[index + 1]
            if left.owner == nil, right.owner == nil, left.durable == left.end, right.durable == right.end {
                segments[index] = Segment(start: left.start, end: right.end, reserved: right.end, written: right.end,
                                          durable: right.end, owner: nil)
                segments.remove(at: index + 1)
            } else {
                index += 1
            }
        }
    }

    private func index(of start: Int64) -> Int? {
        var low = 0
        var high = segments.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if segments[middle].start == start { return middle }
            if segments[middle].start < start { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }
}
