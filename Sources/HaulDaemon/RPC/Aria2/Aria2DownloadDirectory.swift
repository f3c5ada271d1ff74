import Foundation
import Haul

/// The directory the daemon saves downloads in, and the rule that keeps every `dir` option
/// inside it.
///
/// aria2 writes wherever `dir` and `out` point (`out: "../x"` escapes its directory); a daemon
/// that any local client can drive must not. A `dir` is resolved (relative to the current
/// default directory, `..` and symbolic links followed) and must land in this directory or
/// below it; otherwise the call fails and nothing is added or changed.
struct Aria2DownloadDirectory: Sendable, Hashable {
    /// Absolute, symbolic links resolved, no trailing slash (except for `/` itself).
    let root: String

    init(_ url: URL) throws(HaulError) {
        let resolved = url.standardizedFileURL.resolvingSymlinksInPath().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw HaulError(.directoryNotFound, "the download directory \(url.path) does not exist or is not a directory")
        }
        root = resolved
    }

    var url: URL { URL(fileURLWithPath: root, isDirectory: true) }

    /// The directory `text` names, relative to `base` unless absolute, if it lies inside the
    /// download directory; created (with its parents) when it does not exist yet, as aria2
    /// creates a `dir` it is given. `option` names the option in error messages.
    func resolve(_ text: String, relativeTo base: URL, option: String = "dir") throws(JSONRPCError) -> URL {
        guard !text.isEmpty, !text.contains("\0") else {
            throw Aria2OptionParser.problem(option, "a directory path is required")
        }
        guard let confined = confining(text, relativeTo: base) else {
            throw outside(text, option: option)
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: confined.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw Aria2OptionParser.problem(option, "\(confined.path) is not a directory") }
            return confined
        }
        do {
            try FileManager.default.createDirectory(at: confined, withIntermediateDirectories: true)
        } catch {
            throw Aria2OptionParser.problem(option, "cannot create \(confined.path): \(error.localizedDescription)")
        }
        // Checked again now that it exists: a link placed meanwhile must not lead outside.
        guard let created = confining(confined.path, relativeTo: base) else { throw outside(text, option: option) }
        return created
    }

    private func outside(_ text: String, option: String) -> JSONRPCError {
        Aria2OptionParser.problem(option, "'\(text)' is outside the download directory \(root); Haul saves files only inside it")
    }

    /// The directory `text` names (relative to `base` unless absolute), with `..` and symbolic
    /// links resolved, or nil when it is empty or lies outside this directory. Both the path as
    /// written and the one its links lead to must be inside, and the resolved one is returned,
    /// so that what is checked is what is written to.
    func confining(_ text: String, relativeTo base: URL) -> URL? {
        guard !text.isEmpty, !text.contains("\0") else { return nil }
        let joined = text.hasPrefix("/") ? text : base.path + "/" + text
        let standardized = URL(fileURLWithPath: joined).standardizedFileURL.path
        let resolved = URL(fileURLWithPath: standardized).resolvingSymlinksInPath().path
        guard contains(standardized), contains(resolved) else { return nil }
        return URL(fileURLWithPath: resolved, isDirectory: true)
    }

    func contains(_ path: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }
}
