import ArgumentParser

/// `haul pause GID...|--all`: stops downloads with their bytes kept; `haul resume` continues
/// them from there.
struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause downloads of a running haul daemon, keeping their bytes.",
        discussion: """
            Only active and waiting downloads can be paused. Each GID is tried even when an \
            earlier one fails.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @OptionGroup var selection: GIDSelection
    @OptionGroup var connection: DaemonConnectionOptions

    func run() async throws {
        try await StateChange.perform(StateChange.pause, selection, connection)
    }
}
