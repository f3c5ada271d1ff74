import ArgumentParser
import Haul

/// The `haul` tool: `get` downloads on its own, `daemon` runs the transfer service, and `add`,
/// `ls`, `status`, `pause`, `resume`, `rm` and `watch` are clients of a running daemon; `gc`
/// compacts the download store.
@main
struct HaulCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haul",
        abstract: "A download manager that resumes correctly.",
        version: HaulVersion.current,
        subcommands: [
            GetCommand.self, DaemonCommand.self,
            AddCommand.self, ListCommand.self, StatusCommand.self, PauseCommand.self, ResumeCommand.self,
            RemoveCommand.self, WatchCommand.self, GCCommand.self,
        ])

    /// ArgumentParser's own `main`, except that argument errors exit with 2, not 64: Haul
    /// documents 2 for every usage error, like curl, grep and most Unix tools, and scripts
    /// should not need to know which layer noticed the mistake.
    static func main() async {
        do {
            var command = try await asyncParseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                StandardStream.error.writeLine(fullMessage(for: error))
                exit(withError: ExitCode(ExitStatus.usage.rawValue))
            }
            exit(withError: error)
        }
    }
}
