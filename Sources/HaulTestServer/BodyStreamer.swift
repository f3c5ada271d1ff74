import Hummingbird
import NIOCore

/// How one response body is streamed: from where, how much, how fast, and how it ends.
///
/// All of `/file`'s body faults reduce to three numbers decided before the head is sent: how many
/// bytes to write, whether to end by closing the connection instead of finishing the message,
/// and an optional rate. Keeping them in one value keeps the fault logic out of the I/O loop.
struct BodyPlan: Sendable {
    /// What the body bytes are.
    enum Source: Sendable {
        /// Test content for `seed`, starting at content offset `offset` (ranges start mid-file).
        case content(seed: UInt64, offset: Int)
        /// A gzip stream of `size` bytes of test content for `seed`.
        case gzip(seed: UInt64, size: Int)
    }

    var source: Source
    /// Body bytes actually written.
    var sendCount: Int
    /// End by closing the connection after `sendCount` bytes (drop, or a lying Content-Length).
    var abortsConnection: Bool
    /// Before closing the connection, stay silent with it open this long.
    var stallBeforeClosing: Duration?
    /// Throttle to about this many bytes per second.
    var rate: Int?
    /// After this many body bytes, wait until `isReleased` says so (`hold=`).
    var holdAfter: Int?
    /// Whether a held body may go on: the test released its key.
    var isReleased: @Sendable () -> Bool = { true }
    /// Size of each write.
    var chunkSize: Int
}

/// Thrown from a body writer to make Hummingbird close the connection mid-message.
///
/// Hummingbird has no "abort this response" call, but an error escaping the body closure
/// propagates out of the connection's `executeThenClose`, which closes the channel. That close is
/// immediate, though: writes NIO still holds (socket buffer full) would be discarded and the
/// client would see fewer bytes than scripted. So before throwing, `BodyStreamer` half-closes
/// the output with `close(mode: .output)`, which NIO completes only after every pending write
/// has reached the socket, and then sends FIN. The client sees exactly `sendCount` bytes and then
/// end-of-stream, short of the declared length (or without the final chunk): a broken response.
struct ConnectionDropped: Error, Sendable {
    var afterBytes: Int
}

/// Streams a `BodyPlan` through Hummingbird's response body writer.
enum BodyStreamer {
    /// A `ResponseBody` that writes `plan` on `channel` (needed to drop the connection), calling
    /// `written` with the size of every write handed to the connection.
    ///
    /// The Content-Length header is set by the caller (it may lie on purpose), so the body itself
    /// declares no length. `written` is called just before each write, so that a client holding
    /// the bytes always finds them counted, and called again with the negated size if the
    /// connection refused the write. Bytes NIO accepted but never got onto the wire (the client
    /// died) still count: the total is an upper bound of what reached the client, which is
    /// what crash tests need to bound the bytes a client fetched more than once.
    ///
    /// `streaming` is called with `true` when the body starts and `false` when it ends, however
    /// it ends, so that the server can tell how many responses were under way at once.
    static func body(
        for plan: BodyPlan, channel: any Channel, streaming: @escaping @Sendable (Bool) -> Void = { _ in },
        written: @escaping @Sendable (Int) -> Void
    ) -> ResponseBody {
        ResponseBody { writer in
            streaming(true)
            defer { streaming(false) }
            try await self.write(plan, to: &writer, channel: channel, written: written)
            if plan.abortsConnection, let stall = plan.stallBeforeClosing {
                // Silent, not closed: a client with a shorter read timeout gives up first.
                try? await Task.sleep(for: stall)
            }
            if plan.abortsConnection {
                // Wait until everything written is on the wire, then FIN; see `ConnectionDropped`.
                try? await channel.close(mode: .output).get()
                throw ConnectionDropped(afterBytes: plan.sendCount)
            }
            try await writer.finish(nil)
        }
    }

    /// How long a held body waits at most for its release, so that a test that forgot to
    /// release does not keep a connection forever.
    static let holdLimit: Duration = .seconds(60)

    /// Waits, with the connection open and silent, until the plan's key is released, the client
    /// has gone (NIO sees the close while the connection reads), or `holdLimit` passed.
    ///
    /// Polls a flag because the release comes from a synchronous call in the test; 10 ms is
    /// far below anything a test observes and costs nothing while no body is held.
    private static func hold(_ plan: BodyPlan, channel: any Channel) async throws {
        let deadline = ContinuousClock.now + self.holdLimit
        while !plan.isReleased(), channel.isActive, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private static func write(
        _ plan: BodyPlan, to writer: inout any ResponseBodyWriter, channel: any Channel, written: @Sendable (Int) -> Void
    ) async throws {
        var reader = BodyReader(plan.source)
        let allocator = ByteBufferAllocator()
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        while sent < plan.sendCount {
            if sent == plan.holdAfter { try await self.hold(plan, channel: channel) }
            var count = min(plan.chunkSize, plan.sendCount - sent)
            if let holdAfter = plan.holdAfter, sent < holdAfter { count = min(count, holdAfter - sent) }
            var buffer = allocator.buffer(capacity: count)
            reader.read(into: &buffer, count: count)
            written(count)
            do {
                try await writer.write(buffer)
            } catch {
                written(-count)
                throw error
            }
            sent += count
            if let rate = plan.rate, sent < plan.sendCount {
                // Pace against the start time, not per chunk, so sleep overshoot does not accumulate.
                try await Task.sleep(until: start + .seconds(Double(sent) / Double(rate)), clock: clock)
            }
        }
    }
}

/// Produces a body source's bytes sequentially into buffers.
struct BodyReader {
    private enum State {
        case content(seed: UInt64, offset: Int)
        case gzip(GzipStream)
    }

    private var state: State

    init(_ source: BodyPlan.Source) {
        switch source {
        case .content(let seed, let offset):
            self.state = .content(seed: seed, offset: offset)
        case .gzip(let seed, let size):
            self.state = .gzip(GzipStream(seed: seed, size: size))
        }
    }

    /// Appends the next `count` bytes of the source to `buffer`.
    mutating func read(into buffer: inout ByteBuffer, count: Int) {
        switch self.state {
        case .content(let seed, let offset):
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { storage in
                TestContent.fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]), seed: seed, offset: offset)
                return count
            }
            self.state = .content(seed: seed, offset: offset + count)
        case .gzip(var stream):
            _ = stream.read(into: &buffer, count: count)
            self.state = .gzip(stream)
        }
    }
}
