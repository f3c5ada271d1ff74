import Foundation

/// Everything a child process wrote to one pipe, split into lines as it arrives, with a way
/// to wait for a line: tests act when the output says something happened (a progress line
/// past N bytes), never after a fixed sleep.
actor ProcessOutput {
    private var data = Data()
    /// Offset in `data` where the current, unfinished line starts.
    private var lineStart = 0
    private(set) var lines: [String] = []
    private var isFinished = false
    private var waiters: [(key: Int, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = []
    private var nextKey = 0

    func append(_ chunk: Data) {
        data.append(chunk)
        while let newline = data[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            received(String(decoding: data[lineStart..<newline], as: UTF8.self))
            lineStart = newline + 1
        }
    }

    /// The pipe reached end of file; waiters still waiting get nil.
    func finish() {
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
    func firstLine(where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        if let line = lines.first(where: predicate) { return line }
        if isFinished { return nil }
        nextKey += 1
        let key = nextKey
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: nil)
                } else {
                    waiters.append((key, predicate, continuation))
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

    var text: String { String(decoding: data, as: UTF8.self) }

    private func received(_ line: String) {
        lines.append(line)
        var remaining: [(key: Int, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = []
        for waiter in waiters {
            if waiter.predicate(line) {
                waiter.continuation.resume(returning: line)
            } else {
                remaining.append(waiter)
            }
        }
        waiters = remaining
    }
}
