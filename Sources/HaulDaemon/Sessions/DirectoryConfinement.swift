import Foundation
import Haul

/// Where the `haul.*` methods may place (and delete) files, by the listener a call came over.
///
/// On TCP, whoever holds the secret can call them, from every address with `--rpc-listen-all`:
/// a request's directory must lie inside the daemon's download directory (`--dir`) or inside one
/// of the directories given with `--allow-dir`, after `..` and symbolic links are resolved (the
/// rule aria2's `dir` option follows, `Aria2DownloadDirectory`), or the call is refused and
/// nothing is added. Otherwise a secret would be a key to every file the daemon's user can
/// write (`~/.bashrc` with `conflictPolicy: overwrite`).
///
/// On the unix socket the peer is the daemon's own user (the socket is 0600 and peer
/// credentials are checked), who can write those files anyway: apps name any directory.
///
/// A directory that is accepted is replaced by its resolved path, so that what was checked is
/// where the file goes even if a link inside it changes later. A directory reached through a
/// link from one allowed directory into another is refused: each is checked on its own.
struct DirectoryConfinement: Sendable {
    /// `--dir` first, then every `--allow-dir`, each resolved.
    let roots: [Aria2DownloadDirectory]

    init(downloadDirectory: URL, allowed: [URL] = []) throws(HaulError) {
        var roots = [try Aria2DownloadDirectory(downloadDirectory)]
        for directory in allowed {
            do {
                roots.append(try Aria2DownloadDirectory(directory))
            } catch {
                throw HaulError(error.code, "--allow-dir \(directory.path) does not exist or is not a directory")
            }
        }
        self.roots = roots
    }

    /// The requests with their directories resolved, or the refusal of the first one outside
    /// the allowed directories. Over the unix socket none is refused, but each is resolved
    /// too: the daemon opens every directory without following links (a link found in one
    /// later was put there since, see `DownloadManager.Configuration.refusesLinksInDirectories`).
    /// Directories are resolved once per distinct directory (a group nearly always has one).
    func confine(_ requests: [DownloadRequest], over transport: RPCOrigin.Transport) throws(JSONRPCError) -> [DownloadRequest] {
        guard transport == .tcp else { return Self.resolvingLinks(requests) }
        var resolved: [URL: URL] = [:]
        var confined = requests
        for index in confined.indices {
            let directory = confined[index].directory
            if let known = resolved[directory] {
                confined[index].directory = known
                continue
            }
            guard let inside = confining(directory) else { throw refusal(directory) }
            resolved[directory] = inside
            confined[index].directory = inside
        }
        return confined
    }

    /// The requests with `..` and links in their directories resolved.
    private static func resolvingLinks(_ requests: [DownloadRequest]) -> [DownloadRequest] {
        var resolved: [URL: URL] = [:]
        var result = requests
        for index in result.indices {
            let directory = result[index].directory
            if resolved[directory] == nil {
                resolved[directory] = URL(fileURLWithPath: directory.standardizedFileURL.resolvingSymlinksInPath().path, isDirectory: true)
            }
            result[index].directory = resolved[directory]!
        }
        return result
    }

    /// Whether a file in `directory` may be deleted by a call over `transport`: on TCP only
    /// inside the allowed directories, so that a download added over the socket to a directory
    /// elsewhere cannot be used to delete a file there.
    func mayDelete(in directory: URL, over transport: RPCOrigin.Transport) -> Bool {
        transport != .tcp || confining(directory) != nil
    }

    /// The resolved directory, if it lies inside one of the roots. A relative path is taken
    /// relative to `--dir`.
    private func confining(_ directory: URL) -> URL? {
        let path = directory.path
        let base = roots[0].url
        for root in roots {
            if let inside = root.confining(path, relativeTo: base) { return inside }
        }
        return nil
    }

    private func refusal(_ directory: URL) -> JSONRPCError {
        let allowed = roots.map(\.root).joined(separator: ", ")
        return .failed("the directory '\(directory.path)' is outside the directories this daemon writes to for clients over TCP (\(allowed)); name one inside them, or start the daemon with --allow-dir")
    }
}
