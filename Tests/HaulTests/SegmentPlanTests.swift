@testable import Haul
import HaulTestSupport
import Testing

@Suite("Segment plan")
struct SegmentPlanTests {
    /// Writes `count` bytes for the segment's owner into it and returns how many belonged to it.
    @discardableResult
    func write(_ plan: inout SegmentPlan, _ count: Int, segment start: Int64) -> Int {
        let owner = plan.segment(startingAt: start)?.owner ?? -1
        return write(&plan, count, segment: start, by: owner)
    }

    /// Writes `count` bytes for `connection` into the segment and returns how many it was allowed.
    @discardableResult
    func write(_ plan: inout SegmentPlan, _ count: Int, segment start: Int64, by connection: Int) -> Int {
        let reservation = plan.reserve(count, inSegmentStartingAt: start, by: connection)
        plan.commit(reservation.count, inSegmentStartingAt: start, by: connection)
        return reservation.count
    }

    /// A fresh split cuts the length into equal segments (the last takes the remainder) covering every byte once.
    @Test func splitCoversTheFileInEqualSegments() throws {
        let plan = try #require(SegmentPlan.split(totalLength: 1003, connections: 4, minSegmentSize: 100, minStealSize: 10))
        #expect(plan.segments.map(\.start) == [0, 250, 500, 750])
        #expect(plan.segments.map(\.end) == [250, 500, 750, 1003])
        #expect(plan.segments.allSatisfy { $0.written == $0.start && $0.durable == $0.start && $0.owner == nil })
        #expect(!plan.isComplete)
        #expect(plan.writtenBytes == 0)
    }

    /// No segment is planned below the minimum size, and fewer than two segments means no split at all.
    @Test func splitRespectsTheMinimumSegmentSize() throws {
        let three = try #require(SegmentPlan.split(totalLength: 350, connections: 8, minSegmentSize: 100, minStealSize: 10))
        #expect(three.segments.count == 3)
        #expect(SegmentPlan.split(totalLength: 199, connections: 8, minSegmentSize: 100, minStealSize: 10) == nil)
        #expect(SegmentPlan.split(totalLength: 10_000, connections: 1, minSegmentSize: 100, minStealSize: 10) == nil)
        #expect(SegmentPlan.split(totalLength: 0, connections: 4, minSegmentSize: 1, minStealSize: 1) == nil)
    }

    /// Bytes already written by one connection stay in the first segment; only the rest is cut, in equal parts, and nothing counts as durable before a checkpoint.
    @Test func splitOfTheRestKeepsTheWrittenPrefix() throws {
        let plan = try #require(SegmentPlan.split(totalLength: 1000, written: 400, connections: 3, minSegmentSize: 100, minStealSize: 10))
        #expect(plan.segments.map(\.start) == [0, 600, 800])
        #expect(plan.segments.map(\.end) == [600, 800, 1000])
        #expect(plan.segments.map(\.written) == [400, 600, 800])
        #expect(plan.segments.map(\.durable) == [0, 600, 800])
        #expect(plan.writtenBytes == 400)
        #expect(plan.contiguousWrittenPrefix == 400)
        #expect(plan.contiguousDurablePrefix == 0)
        #expect(plan.firstUnfinished?.start == 0)
        // The rest must be worth two segments.
        #expect(SegmentPlan.split(totalLength: 1000, written: 850, connections: 4, minSegmentSize: 100, minStealSize: 10) == nil)
        #expect(SegmentPlan.split(totalLength: 1000, written: 1000, connections: 4, minSegmentSize: 1, minStealSize: 1) == nil)
    }

    /// Connections take unclaimed segments lowest first (or the one they prefer), each its own.
    @Test func connectionsTakeDistinctSegments() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 400, connections: 4, minSegmentSize: 100, minStealSize: 10))
        #expect(plan.assign(to: 0, preferring: 200) == SegmentPlan.Assignment(segmentStart: 200, from: 200, to: 300))
        #expect(plan.assign(to: 1) == SegmentPlan.Assignment(segmentStart: 0, from: 0, to: 100))
        #expect(plan.assign(to: 2) == SegmentPlan.Assignment(segmentStart: 100, from: 100, to: 200))
        #expect(plan.assign(to: 3) == SegmentPlan.Assignment(segmentStart: 300, from: 300, to: 400))
        #expect(Set(plan.segments.compactMap(\.owner)) == [0, 1, 2, 3])
    }

    /// A connection may write only up to its segment's end; the rest of a buffer is not its to write.
    @Test func reservationsStopAtTheSegmentEnd() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 400, connections: 4, minSegmentSize: 100, minStealSize: 10))
        _ = plan.assign(to: 0)
        #expect(write(&plan, 60, segment: 0) == 60)
        let reservation = plan.reserve(60, inSegmentStartingAt: 0, by: 0)
        #expect(reservation == SegmentPlan.Reservation(position: 60, count: 40))
        plan.commit(40, inSegmentStartingAt: 0, by: 0)
        #expect(plan.reserve(10, inSegmentStartingAt: 0, by: 0).count == 0)
        #expect(plan.segment(startingAt: 0)?.isFinished == true)
        #expect(plan.writtenBytes == 100)
    }

    /// Tail stealing: with nothing unclaimed, a connection takes the upper half of the segment with the most bytes left, and that segment's owner stops at the new end.
    @Test func idleConnectionStealsTheUpperHalfOfTheLargestRemainder() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 4000, connections: 4, minSegmentSize: 1000, minStealSize: 50))
        for connection in 0..<4 { _ = plan.assign(to: connection) }
        write(&plan, 1000, segment: 0)
        write(&plan, 900, segment: 1000)
        write(&plan, 200, segment: 2000)   // the slow one: 800 left
        write(&plan, 600, segment: 3000)
        plan.release(segmentStartingAt: 0, by: 0)
        let assignment = plan.assign(to: 0)
        let stolen = try #require(assignment)
        #expect(stolen == SegmentPlan.Assignment(segmentStart: 2600, from: 2600, to: 3000))
        #expect(plan.segment(startingAt: 2000)?.end == 2600)
        #expect(plan.segment(startingAt: 2600)?.owner == 0)
        // The victim is cut at the new end; the thief fills the rest.
        #expect(write(&plan, 1000, segment: 2000) == 400)
        #expect(write(&plan, 1000, segment: 2600) == 400)
        #expect(plan.segments.map(\.start) == [0, 1000, 2000, 2600, 3000])
    }

    /// A steal never takes bytes the victim already reserved for a write in progress.
    @Test func stealingStartsAboveReservedBytes() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 2000, connections: 2, minSegmentSize: 1000, minStealSize: 10))
        _ = plan.assign(to: 0)
        _ = plan.assign(to: 1)
        write(&plan, 1000, segment: 0)
        plan.release(segmentStartingAt: 0, by: 0)
        // Connection 1 reserved 500 bytes and is still writing them.
        let inFlight = plan.reserve(500, inSegmentStartingAt: 1000, by: 1)
        let assignment = plan.assign(to: 0)
        let stolen = try #require(assignment)
        #expect(stolen.from == 1750)
        #expect(inFlight.position + Int64(inFlight.count) <= stolen.from)
        plan.commit(inFlight.count, inSegmentStartingAt: 1000, by: 1)
        #expect(write(&plan, 1000, segment: 1000) == 250)
    }

    /// Nothing is stolen when the half would be smaller than the minimum steal: the connection is done.
    @Test func noStealBelowTheMinimum() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 200, connections: 2, minSegmentSize: 100, minStealSize: 40))
        _ = plan.assign(to: 0)
        _ = plan.assign(to: 1)
        write(&plan, 100, segment: 0)
        write(&plan, 25, segment: 100)
        plan.release(segmentStartingAt: 0, by: 0)
        #expect(plan.assign(to: 0) == nil, "75 bytes left: a 37-byte half is below 40")
    }

    /// A released segment keeps its written bytes; the next connection continues it from there.
    @Test func releasedSegmentIsContinuedFromItsWrittenBytes() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 200, connections: 2, minSegmentSize: 100, minStealSize: 1000))
        _ = plan.assign(to: 0)
        write(&plan, 30, segment: 0)
        _ = plan.reserve(20, inSegmentStartingAt: 0, by: 0)   // reserved, never written: the connection failed
        plan.release(segmentStartingAt: 0, by: 0)
        #expect(plan.assign(to: 1) == SegmentPlan.Assignment(segmentStart: 0, from: 30, to: 100))
    }

    /// Only offsets taken before a flush become durable; the record merges wholly durable segments into the next, losing nothing.
    @Test func durableOffsetsFollowFlushesAndCompact() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 300, connections: 3, minSegmentSize: 100, minStealSize: 10))
        for connection in 0..<3 { _ = plan.assign(to: connection) }
        write(&plan, 100, segment: 0)
        write(&plan, 40, segment: 100)
        write(&plan, 10, segment: 200)
        let snapshot = plan.writtenOffsets
        write(&plan, 30, segment: 100)   // after the snapshot: not durable yet
        plan.markDurable(snapshot)
        #expect(plan.segments.map(\.durable) == [100, 140, 210])
        #expect(plan.durableSegments == [
            DurableSegment(start: 0, end: 200, durableOffset: 140),
            DurableSegment(start: 200, end: 300, durableOffset: 210),
        ])
        #expect(plan.contiguousDurablePrefix == 140)
        #expect(plan.contiguousWrittenPrefix == 170)
    }

    /// A takeover gives an idle connection all of a stalled owner's unreserved bytes, however few (a steal would stop below twice the minimum); the owner keeps what it had reserved and gets nothing more.
    @Test func takeOverTakesTheWholeRestBelowTheStealMinimum() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 200, connections: 2, minSegmentSize: 100, minStealSize: 40))
        _ = plan.assign(to: 0)
        _ = plan.assign(to: 1)
        write(&plan, 100, segment: 0)
        write(&plan, 25, segment: 100)
        let inFlight = plan.reserve(5, inSegmentStartingAt: 100, by: 1)   // the stalled owner's last write in progress
        plan.release(segmentStartingAt: 0, by: 0)
        #expect(plan.assign(to: 0) == nil)
        #expect(plan.ownersWithUnreservedBytes.map(\.connection) == [1])
        #expect(plan.takeOver(from: 1, by: 0) == SegmentPlan.Assignment(segmentStart: 130, from: 130, to: 200))
        plan.commit(inFlight.count, inSegmentStartingAt: 100, by: 1)
        #expect(plan.segment(startingAt: 100)?.isFinished == true)
        #expect(write(&plan, 10, segment: 100, by: 1) == 0, "the stalled owner gets nothing more")
        #expect(write(&plan, 100, segment: 130, by: 0) == 70)
        plan.release(segmentStartingAt: 100, by: 1)
        plan.release(segmentStartingAt: 130, by: 0)
        #expect(plan.isComplete)
        #expect(plan.ownersWithUnreservedBytes.isEmpty)
    }

    /// A stalled owner that received nothing of its segment loses the whole segment; whatever it does with it later is ignored.
    @Test func takeOverOfAnUntouchedSegmentChangesItsOwner() throws {
        var plan = try #require(SegmentPlan.split(totalLength: 200, connections: 2, minSegmentSize: 100, minStealSize: 1000))
        _ = plan.assign(to: 0)
        _ = plan.assign(to: 1)
        write(&plan, 100, segment: 0)
        plan.release(segmentStartingAt: 0, by: 0)
        #expect(plan.takeOver(from: 1, by: 0) == SegmentPlan.Assignment(segmentStart: 100, from: 100, to: 200))
        #expect(plan.segment(startingAt: 100)?.owner == 0)
        #expect(write(&plan, 50, segment: 100, by: 1) == 0)
        plan.release(segmentStartingAt: 100, by: 1)
        #expect(plan.segment(startingAt: 100)?.owner == 0, "the former owner's release does not free the new owner's segment")
        #expect(write(&plan, 100, segment: 100, by: 0) == 100)
        #expect(plan.isComplete)
        #expect(plan.takeOver(from: 0, by: 1) == nil, "nothing unreserved is left to take")
    }

    /// A recorded plan is trusted only if its segments tile the file with offsets inside them.
    @Test func resumingValidatesTheRecord() throws {
        let good = [DurableSegment(start: 0, end: 100, durableOffset: 100), DurableSegment(start: 100, end: 300, durableOffset: 150)]
        let plan = try #require(SegmentPlan(resuming: good, totalLength: 300, minStealSize: 10))
        #expect(plan.writtenBytes == 150)
        #expect(plan.firstUnfinished?.start == 100)
        #expect(plan.firstUnfinished?.written == 150)
        let gap = [DurableSegment(start: 0, end: 100, durableOffset: 50), DurableSegment(start: 120, end: 300, durableOffset: 150)]
        let overlap = [DurableSegment(start: 0, end: 150, durableOffset: 50), DurableSegment(start: 100, end: 300, durableOffset: 150)]
        let outside = [DurableSegment(start: 0, end: 100, durableOffset: 120), DurableSegment(start: 100, end: 300, durableOffset: 150)]
        let short = [DurableSegment(start: 0, end: 100, durableOffset: 50)]
        for record in [gap, overlap, outside, short, []] {
            #expect(SegmentPlan(resuming: record, totalLength: 300, minStealSize: 10) == nil)
        }
    }

    /// Simulated connections that write random buffers, fail now and then, and steal at the tail write every byte exactly once.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func randomRunsWriteEveryByteOnce(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let total: Int64 = 10_000
        var plan = try #require(SegmentPlan.split(totalLength: total, connections: 4, minSegmentSize: 1000, minStealSize: 64))
        var writes = [Int](repeating: 0, count: Int(total))
        var working: [Int: Int64] = [:]
        var idle: Set<Int> = []
        for connection in 0..<5 {
            if let assignment = plan.assign(to: connection) { working[connection] = assignment.segmentStart } else { idle.insert(connection) }
        }
        var steps = 0
        while !plan.isComplete {
            steps += 1
            try #require(steps < 100_000, "the plan stopped making progress")
            guard let (connection, start) = working.randomElement(using: &random) else {
                // Every connection gave up: a fresh one (a later attempt) takes over.
                let connection = (idle.first ?? 0)
                idle.remove(connection)
                let assignment = plan.assign(to: connection)
                working[connection] = try #require(assignment).segmentStart
                continue
            }
            if Int.random(in: 0..<50, using: &random) == 0 {
                plan.release(segmentStartingAt: start, by: connection)   // a broken connection
                working[connection] = nil
                idle.insert(connection)
                continue
            }
            let reservation = plan.reserve(Int.random(in: 1...700, using: &random), inSegmentStartingAt: start, by: connection)
            for offset in reservation.position..<(reservation.position + Int64(reservation.count)) { writes[Int(offset)] += 1 }
            plan.commit(reservation.count, inSegmentStartingAt: start, by: connection)
            if plan.segment(startingAt: start)?.isFinished == true || reservation.count == 0 {
                plan.release(segmentStartingAt: start, by: connection)
                working[connection] = plan.assign(to: connection)?.segmentStart
                if working[connection] == nil { idle.insert(connection) }
            }
        }
        #expect(writes.allSatisfy { $0 == 1 })
        #expect(plan.writtenBytes == total)
    }
}
