import Foundation

extension DownloadStore {
    /// The database's file name inside a state directory.
    static let fileName = "haul.sqlite"

    /// `$XDG_STATE_HOME/haul`, else `~/.local/state/haul`.
    ///
    /// The XDG base directory spec puts "state that should persist between restarts" (history,
    /// queues) there, which is what the store holds; it is not configuration, and not a cache
    /// that may be wiped.
    static func defaultDirectory() -> URL {
        defaultDirectory(environment: ProcessInfo.processInfo.environment)
    }

    /// `defaultDirectory()` for a given environment, so that it can be tested without
    /// changing the process's own.
    static func defaultDirectory(environment: [String: String]) -> URL {
        // The spec says relative values are invalid and must be ignored.
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent("haul", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/state/haul", isDirectory: true)
    }

    /// Creates the state directory (and missing parents) readable by the owner only: the store
    /// holds URLs and request headers, which may carry credentials. An existing directory is
    /// left as it is.
    static func createDirectory(_ directory: URL) throws(HaulError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw HaulError(.fileSystem, "cannot create the state directory \(directory.path): \(error.localizedDescription)")
        }
    }
}
