import Foundation

/// Finds the `haul` executable the tests run as a child process.
///
/// `swift test` builds every product, and puts `haul` in the same directory as the test
/// bundle (`.build/<triple>/debug/`), so the runner's own path is the first place to look.
/// `HAUL_BINARY` overrides it; walking up from this file to `.build/debug/haul` covers runners
/// that start the tests from elsewhere.
enum HaulBinary {
    static let url: URL? = {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["HAUL_BINARY"] {
            return URL(fileURLWithPath: override)
        }
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // The runner is `…/debug/HaulPackageTests.xctest` (a file on Linux, a bundle on macOS,
        // where the binary sits at `….xctest/Contents/MacOS/…`).
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("haul"))
            directory = directory.deletingLastPathComponent()
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/haul"))
        return candidates.first { candidate in
            var isDirectory: ObjCBool = false
            return fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory)
                && !isDirectory.boolValue && fileManager.isExecutableFile(atPath: candidate.path)
        }
    }()
}
