import ArgumentParser

/// `haul watch`: a live view of a running daemon's downloads, with a progress bar per active
/// download, redrawn in place on a terminal.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch a running haul daemon's downloads live, with progress bars.",
        discussion: """
            On a terminal the view is redrawn in place every --interval: a bar per active \
            download (then paused ones, while there is room), and a line with the counts, the \
            bytes, the daemon's speed and the ETA; downloads that finish are printed above it \
            as lines that stay (done, failed, removed). On a pipe the first view is printed, \
            then only those lines, and the last view at the end. Ctrl-C ends the view (exit 130); the downloads go on \
            in the daemon. --until-done ends it (exit 0) once no download is active or queued; \
            paused downloads wait for a person and do not keep it open. --once prints the view \
            once, without escape sequences.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @Flag(help: "Print one snapshot of the view and exit.")
    var once = false

    @Flag(name: .customLong("until-done"), help: "Exit with 0 once no download is active or queued.")
    var untilDone = false

    @Option(help: ArgumentHelp("Milliseconds between refreshes (100 to 60000).", valueName: "ms"))
    var interval = 500

    @OptionGroup var connection: DaemonConnectionOptions

    func validate() throws {
        if once, untilDone { throw ValidationError("--once prints one snapshot; it cannot be combined with --until-done") }
        guard (100...60_000).contains(interval) else { throw ValidationError("--interval must be between 100 and 60000 milliseconds") }
    }

    func run() async throws {
        if once {
            try await WatchRun.once(connection)
            return
        }
        let status = await WatchRun(connection: connection, interval: .milliseconds(interval), untilDone: untilDone).run()
        if status != .success { throw ExitCode(status.rawValue) }
    }
}
