import Foundation

/// A child's output split into lines as it arrives, with a way to wait for the n-th line of a
/// kind: the crash test kills its worker when the output says enough has happened, never
/// after a fixed sleep, so the kill lands at a moment in the work whatever the machine's speed.
actor LineLog {
    private struct Waiter {
        let key: Int
        let count: Int
        let predicate: @Sendable (String) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private var pending = Data()
    private(set) var lines: [String] = []
    private var isFinished = false
    private var waiters: [Waiter] = []
    private var nextKey = 0

    func append(_ chunk: Data) {
        pending.append(chunk)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
            pending.removeSubrange(pending.startIndex...newline)
        }
        wakeWaiters()
    }

    /// The pipe reached end of file: a last unterminated line counts, and waiters still waiting
    /// learn that their line will never come.
    func finish() {
        if !pending.isEmpty {
            lines.append(String(decoding: pending, as: UTF8.self))
            pending = Data()
        }
        isFinished = true
        wakeWaiters()
    }

    /// True once `count` lines matching `predicate` have arrived; false if the output ended
    /// with fewer, or the waiting task was canceled (as a test's time limit does: a wait that
    /// ignored it would hold up the whole test run).
    func waitForLines(_ count: Int, where predicate: @escaping @Sendable (String) -> Bool) async -> Bool {
        if matching(predicate) >= count { return true }
        if isFinished { return false }
        nextKey += 1
        let key = nextKey
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: false)
                } else {
                    waiters.append(Waiter(key: key, count: count, predicate: predicate, continuation: continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelWait(key) }
        }
    }

    private func cancelWait(_ key: Int) {
        guard let index = waiters.firstIndex(where: { $0.key == key }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }

    var text: String { lines.joined(separator: "\n") }

    private func matching(_ predicate: (String) -> Bool) -> Int {
        lines.count { predicate($0) }
    }

    private func wakeWaiters() {
        var remaining: [Waiter] = []
        for waiter in waiters {
            if matching(waiter.predicate) >= waiter.count {
                waiter.continuation.resume(returning: true)
            } else if isFinished {
                waiter.continuation.resume(returning: false)
            } else {
                remaining.append(waiter)
            }
        }
        waiters = remaining
    }
}
