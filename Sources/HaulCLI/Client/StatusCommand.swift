import ArgumentParser
import Haul

/// `haul status GID`: one download in detail.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show one download of a running haul daemon in detail.",
        discussion: """
            A unique prefix of a GID names it too. With --json the download is one JSON object \
            with the keys of `haul ls --json`.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @Argument(help: "The download's GID (16 hex digits, or a unique prefix).")
    var gid: String

    @Flag(help: "Print the download as a JSON object.")
    var json = false

    @OptionGroup var connection: DaemonConnectionOptions

    func validate() throws {
        try GIDArgument.validate([gid])
    }

    func run() async throws {
        let gid = self.gid
        let json = self.json
        try await ClientRun.perform(connection) { client, _ throws(CommandFailure) in
            let entry = try await client.tellStatus(gid)
            if json {
                StandardStream.output.writeLine(DownloadJSON.text(DownloadJSON(entry)))
            } else {
                StandardStream.output.write(StatusReport.lines(entry).map { $0 + "\n" }.joined())
            }
        }
    }
}
