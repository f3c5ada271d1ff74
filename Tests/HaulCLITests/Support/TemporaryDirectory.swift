import Foundation

/// A fresh directory per test, removed afterwards, so that tests running in parallel never see
/// each other's files (or part files).
struct TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("haul-cli-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    var path: String { url.path }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func contents(of name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name).path).map { [UInt8]($0) }
    }

    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: file(name))
    }

    /// Names in the directory, sorted; hidden ones included.
    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Haul's own part files and resume records (`.haul-*`) left in the directory.
    func haulLeftovers() -> [String] {
        names().filter { $0.hasPrefix(".haul-") }
    }

    /// Size of a file, or nil when it does not exist.
    func size(of name: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: file(name).path)[.size] as? Int) ?? nil
    }
}

/// Runs `body` with a temporary directory and always removes it.
func withTemporaryDirectory<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TemporaryDirectory) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}

extension TemporaryDirectory {
    /// Haul's part files left in any directory.
    static func leftovers(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".haul-") }
    }
}
