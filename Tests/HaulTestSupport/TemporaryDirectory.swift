import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh, empty directory for one test, so that tests running in parallel never see each
/// other's files (or part files). The test removes it when it is done: `defer { directory.remove() }`
/// right after making it, or `withTemporaryDirectory { directory in … }`.
///
/// It is made under the system's temporary directory as `haul-test-PID-RANDOM`, where PID is
/// the test process. A test process that is killed (by CI's time limit, a crash, kill -9) runs
/// no `defer`; so the first directory a later test process makes also removes every
/// `haul-test-PID-*` whose process no longer runs, and what a killed run wrote (gigabytes, for
/// the crash and scale tests) does not pile up on the machine.
///
/// The path is short and free of symbolic links: a unix socket made in it stays under the
/// ~100-byte limit of socket paths, and paths compare equal to those a daemon reports.
public struct TemporaryDirectory: Sendable, CustomStringConvertible {
    /// The start of every such directory's name.
    public static let namePrefix = "haul-test-"

    public let url: URL

    public var path: String { url.path }
    public var description: String { path }

    /// Makes a new directory (and, the first time in this process, removes those of test
    /// processes that ended without removing theirs).
    public init() throws {
        _ = Self.leftoversRemoved
        let name = Self.namePrefix + "\(getpid())-" + String(format: "%08x", UInt32.random(in: .min ... .max))
        url = Self.parent.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    /// `name` (a relative path) inside the directory; nothing is created.
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// The path of `name` (a relative path) inside the directory; nothing is created.
    public func path(_ name: String) -> String {
        file(name).path
    }

    /// A directory `name` (a relative path) inside this one, created with its parents.
    public func subdirectory(_ name: String) throws -> URL {
        let directory = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Removes the directory and everything in it. Idempotent.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Where the directories go: the system's temporary directory, or /tmp when that path is
    /// long (as on macOS, /var/folders/…), for the sake of socket paths.
    static let parent: URL = {
        let system = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true).resolvingSymlinksInPath()
        return system.path.utf8.count <= 40 ? system : URL(fileURLWithPath: "/tmp", isDirectory: true).resolvingSymlinksInPath()
    }()

    /// Runs once per process, before its first directory is made.
    private static let leftoversRemoved: Void = removeLeftoversOfEndedProcesses()

    /// Removes the directories of test processes that no longer run. A process ID may have
    /// been reused by another program since; then its directories wait for a later run.
    private static func removeLeftoversOfEndedProcesses() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix(namePrefix) {
            guard let owner = name.dropFirst(namePrefix.count).split(separator: "-").first.flatMap({ pid_t($0) }),
                  owner != getpid(), kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
    }
}

/// Runs `body` with a new temporary directory and removes the directory afterwards, whether
/// `body` returned or threw.
public func withTemporaryDirectory<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TemporaryDirectory) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}
