import Haul

/// A problem that ends `haul get` before or instead of downloading, with the message for the
/// person at the terminal and the exit status scripts see.
struct CommandFailure: Error, Sendable, CustomStringConvertible {
    let status: ExitStatus
    let message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A usage error (exit 2): something on the command line or in the input file is wrong.
    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(.usage, message)
    }

    /// A library error met while preparing, mapped through `ExitStatus.errorCodeTable`.
    init(_ error: HaulError) {
        self.init(ExitStatus(for: error), error.message)
    }

    var description: String { message }
}
