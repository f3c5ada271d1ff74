import Foundation
import HaulTestSupport
import Testing

/// The `Haul` library's public API is a promise: `api/Haul.txt` lists every public symbol with
/// its declaration, and this test fails when the module's surface differs from it, so that
/// every change to the surface is a deliberate one. After a deliberate change:
/// `HAUL_UPDATE_API=1 swift test --filter PublicAPITests` rewrites the listing (review its diff).
///
/// The listing comes from the compiler (`swift-symbolgraph-extract` on the module just built),
/// not from reading the sources, so nothing public escapes it.
@Suite(.timeLimit(.minutes(2)))
struct PublicAPITests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let listing = root.appendingPathComponent("api/Haul.txt")

    /// Every public symbol has a doc comment (its own, or the protocol requirement's it implements).
    @Test func everyPublicSymbolIsDocumented() throws {
        let undocumented = try Self.symbolGraph().symbols.filter { ($0.docComment?.lines.isEmpty ?? true) }
            .map { $0.pathComponents.joined(separator: ".") }.sorted()
        #expect(undocumented.isEmpty, "public symbols without a doc comment:\n\(undocumented.joined(separator: "\n"))")
    }

    /// The public symbols of the module as built match the checked-in listing.
    @Test func publicSurfaceMatchesTheListing() throws {
        let current = try Self.publicSymbols()
        #expect(current.count > 50, "the symbol graph was read")
        if ProcessInfo.processInfo.environment["HAUL_UPDATE_API"] == "1" {
            try FileManager.default.createDirectory(at: Self.listing.deletingLastPathComponent(), withIntermediateDirectories: true)
            try (Self.header + current.joined(separator: "\n") + "\n").write(to: Self.listing, atomically: true, encoding: .utf8)
            return
        }
        let text = try String(contentsOf: Self.listing, encoding: .utf8)
        let expected = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init).filter { !$0.hasPrefix("#") }
        let added = Set(current).subtracting(expected).sorted()
        let removed = Set(expected).subtracting(current).sorted()
        #expect(added.isEmpty && removed.isEmpty, """
            the public API differs from api/Haul.txt; if the change is deliberate, run \
            HAUL_UPDATE_API=1 swift test --filter PublicAPITests and commit the listing.
            added:
            \(added.joined(separator: "\n"))
            removed:
            \(removed.joined(separator: "\n"))
            """)
    }

    static let header = """
        # The public API of the Haul library: one line per symbol, `path: declaration`, sorted.
        # Checked by Tests/HaulTests/PublicAPITests.swift; regenerate with
        # HAUL_UPDATE_API=1 swift test --filter PublicAPITests after a deliberate change.

        """

    /// `path: declaration` for every public symbol of `Haul`, sorted, one per line.
    static func publicSymbols() throws -> [String] {
        let lines = try symbolGraph().symbols.map { symbol in
            let declaration = symbol.declarationFragments.map(\.spelling).joined()
                .split(whereSeparator: \.isNewline).joined(separator: " ")
            return symbol.pathComponents.joined(separator: ".") + ": " + declaration
        }
        return Set(lines).sorted()
    }

    /// The module's public symbol graph, as the compiler extracts it.
    static func symbolGraph() throws -> SymbolGraph {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let output = temporary.url
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift-symbolgraph-extract"] + (try extractArguments()) + ["-output-dir", output.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ExtractionFailure(message: String(decoding: message, as: UTF8.self))
        }
        let data = try Data(contentsOf: output.appendingPathComponent("Haul.symbols.json"))
        return try JSONDecoder().decode(SymbolGraph.self, from: data)
    }

    /// The module search paths of this build: its modules, the module maps SwiftPM wrote for
    /// the C targets, and the C targets' headers in the checkouts.
    static func extractArguments() throws -> [String] {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var build = testBinary.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: build.appendingPathComponent("Modules/Haul.swiftmodule").path) {
            let parent = build.deletingLastPathComponent()
            guard parent.path != build.path else { throw ExtractionFailure(message: "no Modules/Haul.swiftmodule above \(testBinary.path)") }
            build = parent
        }
        let triple = build.deletingLastPathComponent().lastPathComponent
        var arguments = ["-module-name", "Haul", "-target", triple, "-I", build.appendingPathComponent("Modules").path,
                         "-minimum-access-level", "public", "-skip-synthesized-members"]
        var mapFiles = Self.files(named: "module.modulemap", under: build, depth: 2)
        let checkouts = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        mapFiles += Self.files(named: "module.modulemap", under: checkouts, depth: 4).filter { $0.contains("/Sources/") && !$0.contains("/include/") }
        for map in mapFiles { arguments += ["-Xcc", "-fmodule-map-file=\(map)"] }
        for include in Self.directories(named: "include", under: checkouts, depth: 4) where include.contains("/Sources/") {
            arguments += ["-Xcc", "-I", "-Xcc", include]
        }
        return arguments
    }

    static func files(named name: String, under root: URL, depth: Int) -> [String] {
        entries(under: root, depth: depth).filter { $0.lastPathComponent == name && !isDirectory($0) }.map(\.path).sorted()
    }

    static func directories(named name: String, under root: URL, depth: Int) -> [String] {
        entries(under: root, depth: depth).filter { $0.lastPathComponent == name && isDirectory($0) }.map(\.path).sorted()
    }

    static func entries(under root: URL, depth: Int) -> [URL] {
        guard depth > 0, let children = try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil) else { return [] }
        return children + children.filter(isDirectory).flatMap { entries(under: $0, depth: depth - 1) }
    }

    static func isDirectory(_ url: URL) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) && directory.boolValue
    }

    struct ExtractionFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { "swift-symbolgraph-extract failed: \(message)" }
    }

    struct SymbolGraph: Decodable {
        struct Symbol: Decodable {
            struct Fragment: Decodable { let spelling: String }
            struct DocComment: Decodable {
                struct Line: Decodable { let text: String }
                let lines: [Line]
            }
            let pathComponents: [String]
            let declarationFragments: [Fragment]
            let docComment: DocComment?
        }
        let symbols: [Symbol]
    }
}
