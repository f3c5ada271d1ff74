import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// Directories opened without links (`PartFile.followsDirectoryLinks` false, as the daemon
/// opens them): while a part file found that way is open, the next one in the same directory
/// opens it in one `open` by its path (`LinkFreeDirectories`), and only when the path still
/// leads to that very directory; a link to elsewhere put in the path is refused as before.
@Suite("Directories found without links", .timeLimit(.minutes(1)))
struct LinkFreeDirectoriesTests {
    func part(in directory: String, _ key: String) -> PartFile {
        var part = PartFile(directory: directory, key: key)
        part.followsDirectoryLinks = false
        return part
    }

    /// Each open part file holds its directory; the hold ends with the last one's close, and a
    /// part file that follows links holds nothing.
    @Test func aDirectoryIsHeldWhileAPartFileInItIsOpen() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let out = try temporary.subdirectory("a/out").path
        let directories = LinkFreeDirectories.shared
        var first = part(in: out, "one")
        var second = part(in: out, "two")
        #expect(try first.acquire(creating: true))
        #expect(directories.holders(of: out) == 1)
        #expect(try second.acquire(creating: true))
        #expect(directories.holders(of: out) == 2)
        first.close()
        #expect(directories.holders(of: out) == 1)
        second.close()
        #expect(directories.holders(of: out) == 0)

        var following = PartFile(directory: out, key: "three")
        #expect(try following.acquire(creating: true))
        #expect(directories.holders(of: out) == 0)
        following.close()
    }

    /// With a part file open in `a/out`, `a` is moved away and replaced by a link to another
    /// directory that has an `out`: the next part file at the same path is refused, and nothing
    /// is created there. Replaced by a link to the moved directory itself, the path leads to
    /// the held directory, and the part file is made there.
    @Test func aLinkToElsewhereIsRefusedWhileTheDirectoryIsHeld() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let out = try temporary.subdirectory("a/out").path
        let elsewhere = try temporary.subdirectory("elsewhere/out").path
        var holder = part(in: out, "held")
        #expect(try holder.acquire(creating: true))
        defer { holder.close() }
        let manager = FileManager.default
        try manager.moveItem(atPath: temporary.path("a"), toPath: temporary.path("moved"))
        try manager.createSymbolicLink(atPath: temporary.path("a"), withDestinationPath: temporary.path("elsewhere"))

        var swapped = part(in: out, "swapped")
        let error = #expect(throws: HaulError.self) { _ = try swapped.acquire(creating: true) }
        #expect(error?.code == .directoryNotFound, "\(String(describing: error))")
        #expect(try manager.contentsOfDirectory(atPath: elsewhere).isEmpty)

        try manager.removeItem(atPath: temporary.path("a"))
        try manager.createSymbolicLink(atPath: temporary.path("a"), withDestinationPath: temporary.path("moved"))
        var same = part(in: out, "same")
        #expect(try same.acquire(creating: true))
        same.close()
        #expect(manager.fileExists(atPath: temporary.path("moved/out/.haul-same.part")))
        #expect(try manager.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    /// Without a part file open there, the same link to the moved directory is refused: only
    /// a held directory can stand for the walk.
    @Test func aLinkIsRefusedWhenNothingHoldsTheDirectory() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let out = try temporary.subdirectory("a/out").path
        let manager = FileManager.default
        try manager.moveItem(atPath: temporary.path("a"), toPath: temporary.path("moved"))
        try manager.createSymbolicLink(atPath: temporary.path("a"), withDestinationPath: temporary.path("moved"))
        var linked = part(in: out, "linked")
        let error = #expect(throws: HaulError.self) { _ = try linked.acquire(creating: true) }
        #expect(error?.code == .directoryNotFound, "\(String(describing: error))")
        #expect(try manager.contentsOfDirectory(atPath: temporary.path("moved/out")).isEmpty)
    }
}
