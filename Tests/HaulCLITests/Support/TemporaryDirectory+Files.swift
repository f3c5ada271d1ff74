import Foundation
import HaulTestSupport

/// What the CLI tests read from the directory a `haul` command wrote into.
extension TemporaryDirectory {
    func contents(of name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path(name)).map { [UInt8]($0) }
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
        (try? FileManager.default.attributesOfItem(atPath: path(name))[.size] as? Int) ?? nil
    }

    /// Haul's part files left in any directory.
    static func leftovers(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".haul-") }
    }
}
