import Foundation

/// Everything a child process wrote to one pipe, split into lines as it arrives, with ways to
/// wait for lines: tests act when the output says something happened (a progress line past N
/// bytes, the n-th file done), never after a fixed sleep, so that what they do lands at the
/// same moment of the work whatever the machine's speed.
public actor ProcessOutput {
    private struct Waiter {
        let key: Int
        let predicate: @Sendable (String) -> Bool
        /// Matching lines still to come before the wait is over.
        var needed: Int
        let continuation: CheckedContinuation<String?, Never>
    }

    private var data = Data()
    /// Offset in `data` where the current, unfinished line starts.
    private var lineStart = 0
    public private(set) var lines: [String] = []
    private var isFinished = false
    private var waiters: [Waiter] = []
    private var nextKey = 0

    public init() {}

    public func append(_ chunk: Data) {
        data.append(chunk)
        while let newline = data[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            received(String(decoding: data[lineStart..<newline], as: UTF8.self))
            lineStart = newline + 1
        }
    }

    /// Reads `chunks` (a child's pipe) to its end, then finishes.
    public func read(_ chunks: AsyncStream<Data>) async {
        for await chunk in chunks { append(chunk) }
        finish()
    }

    /// The pipe reached end of file: a last unterminated line counts, and waiters still
    /// waiting learn that their line will never come.
    public func finish() {
        if lineStart < data.count {
            received(String(decoding: data[lineStart...], as: UTF8.self))
            lineStart = data.count
        }
        isFinished = true
        let pending = waiters
        waiters = []
        for waiter in pending { waiter.continuation.resume(returning: nil) }
    }

    /// The first line (already received or still to come) matching `predicate`, or nil when
    /// the output ended without one or the waiting task was canceled (a test's time limit
    /// cancels it: a wait that ignored that would hold up the whole test run).
    public func firstLine(where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        await line(1, where: predicate)
    }

    /// True once `count` lines matching `predicate` have arrived; false if the output ended
    /// with fewer, or the waiting task was canceled.
    public func waitForLines(_ count: Int, where predicate: @escaping @Sendable (String) -> Bool) async -> Bool {
        count <= 0 ? true : await line(count, where: predicate) != nil
    }

    /// The `count`-th line matching `predicate`, or nil when there will be none.
    private func line(_ count: Int, where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        var needed = count
        for line in lines where predicate(line) {
            needed -= 1
            if needed == 0 { return line }
        }
        if isFinished { return nil }
        nextKey += 1
        let key = nextKey
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: nil)
                } else {
                    waiters.append(Waiter(key: key, predicate: predicate, needed: needed, continuation: continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelWait(key) }
        }
    }

    private func cancelWait(_ key: Int) {
        guard let index = waiters.firstIndex(where: { $0.key == key }) else { return }
        waiters.remove(at: index).continuation.resume(returning: nil)
    }

    /// Everything written so far, as text.
    public var text: String { String(decoding: data, as: UTF8.self) }

    private func received(_ line: String) {
        lines.append(line)
        var remaining: [Waiter] = []
        for var waiter in waiters {
            if waiter.predicate(line) { waiter.needed -= 1 }
            if waiter.needed == 0 {
                waiter.continuation.resume(returning: line)
            } else {
                remaining.append(waiter)
            }
        }
        waiters = remaining
    }
}
