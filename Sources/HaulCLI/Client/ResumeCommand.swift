import ArgumentParser

/// `haul resume GID...|--all`: paused downloads wait in the queue again and continue from
/// their last checkpoint when a slot frees.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume paused downloads of a running haul daemon.",
        discussion: """
            A resumed download joins the back of the queue and continues from its bytes on \
            disk when the server proves the file unchanged. Each GID is tried even when an \
            earlier one fails.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @OptionGroup var selection: GIDSelection
    @OptionGroup var connection: DaemonConnectionOptions

    func run() async throws {
        try await StateChange.perform(StateChange.resume, selection, connection)
    }
}
