import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process whose standard output and standard error are read as lines, for tests that
/// wait for what a real process says ("ready", "enqueued 6000") instead of sleeping.
public final class LineProcess: Sendable {
    public let child: ChildProcess
    public let output: AsyncStream<String>
    public let errors: AsyncStream<String>
    private let termination: Task<Int32, Never>
    private let watchdog: Task<Bool, Never>

    /// Starts `executable ARGUMENTS`; it is killed if still running after `timeout`.
    public init(executable: String, arguments: [String], timeout: Duration = .seconds(300)) throws {
        child = try ChildProcess(executable: executable, arguments: arguments)
        output = Self.lines(of: child.stdout)
        errors = Self.lines(of: child.stderr)
        termination = child.terminationTask()
        watchdog = child.watchdog(termination, timeout: timeout)
    }

    public func send(_ signal: Int32) { child.send(signal) }

    /// The wait status once the process has exited.
    public func waitForExit() async -> Int32 { await termination.value }

    /// A stream of bytes as lines (without their newlines); a last line without one too.
    public static func lines(of chunks: AsyncStream<Data>) -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        Task {
            var pending = Data()
            for await chunk in chunks {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }
        return lines
    }

    /// A product built beside the test runner (where `swift build --build-tests` puts every
    /// executable), else in this package's `.build/debug`.
    public static func builtProduct(_ name: String) -> String? {
        var candidates: [URL] = []
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent(name))
            directory = directory.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)"))
        return candidates.first { candidate in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory)
                && !isDirectory.boolValue && FileManager.default.isExecutableFile(atPath: candidate.path)
        }?.path
    }
}
