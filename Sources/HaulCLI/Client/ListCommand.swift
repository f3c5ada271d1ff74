import ArgumentParser
import Haul

/// `haul ls`: the daemon's downloads, active first, then waiting (queued, then paused), then
/// stopped (complete, error, removed).
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a running haul daemon's downloads: GID, state, progress, speed, name.",
        discussion: """
            States are aria2's: active, waiting (queued), paused, complete, error, removed. \
            With --json the list is one JSON array of objects with the keys gid, state, name, \
            path, directory, url, completedBytes, totalBytes, fraction, bytesPerSecond, \
            errorCode and errorMessage (null when not known).

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @Flag(help: "Print the list as a JSON array.")
    var json = false

    @OptionGroup var connection: DaemonConnectionOptions

    func run() async throws {
        let json = self.json
        try await ClientRun.perform(connection) { client, _ throws(CommandFailure) in
            let entries = try await client.allDownloads()
            if json {
                StandardStream.output.writeLine(DownloadJSON.text(entries.map(DownloadJSON.init)))
            } else {
                StandardStream.output.write(DownloadTable.lines(entries).map { $0 + "\n" }.joined())
            }
        }
    }
}
