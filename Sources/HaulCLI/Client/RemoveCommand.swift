import ArgumentParser

/// `haul rm GID... [--force]`: takes downloads off the daemon's list.
///
/// A finished download (complete, error, removed) is forgotten and its file stays. An
/// unfinished one (active, waiting, paused) needs `--force`, because removing it stops it and
/// deletes the bytes downloaded so far: like `docker rm`, the destructive case is asked for.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove downloads from a running haul daemon's list.",
        discussion: """
            A finished download (complete, error, removed) is taken off the list; a completed \
            file stays where it is. An unfinished one (active, waiting, paused) is removed only \
            with --force: it is stopped and its partial file is deleted (aria2's forceRemove). \
            Each GID is tried even when an earlier one fails.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @Argument(help: "GIDs of the downloads (16 hex digits, or unique prefixes).")
    var gids: [String]

    @Flag(name: [.customShort("f"), .customLong("force")], help: "Also stop and remove unfinished downloads, deleting their partial files.")
    var force = false

    @OptionGroup var connection: DaemonConnectionOptions

    func validate() throws {
        guard !gids.isEmpty else { throw ValidationError("give at least one GID") }
        try GIDArgument.validate(gids)
    }

    func run() async throws {
        let gids = self.gids
        let force = self.force
        try await ClientRun.perform(connection) { client, run throws(CommandFailure) in
            for gid in gids {
                do throws(CommandFailure) {
                    let removed = try await Self.remove(gid, force: force, client: client)
                    StandardStream.output.writeLine("removed \(removed)")
                } catch {
                    run.report(error)
                    if error.status == .daemonUnavailable { return }
                }
            }
        }
    }

    /// Removes one download; returns its full GID.
    static func remove(_ gid: String, force: Bool, client: DaemonClient) async throws(CommandFailure) -> String {
        let keys = ["gid", "status"]
        let entry = try await client.tellStatus(gid, keys: keys)
        if !entry.status.isStopped {
            guard force else {
                throw CommandFailure(.daemonRefused, """
                    \(entry.gid) is \(entry.status.rawValue); `haul rm --force \(entry.gid)` stops it and deletes its partial file
                    """)
            }
            do throws(CommandFailure) {
                try await client.act("aria2.forceRemove", on: entry.gid)
            } catch {
                // It may have finished between the two calls: then forgetting it is all that is left.
                guard try await client.tellStatus(entry.gid, keys: keys).status.isStopped else { throw error }
            }
        }
        try await client.act("aria2.removeDownloadResult", on: entry.gid)
        return entry.gid
    }
}
