import ArgumentParser
import Haul

/// How every client command ends: its failures printed as `haul: error: …` on standard error,
/// and its exit status the one documented for the kind of failure.
///
/// A command that acts on several downloads (`haul pause A B C`) goes on after one of them
/// fails, so that one unknown GID does not leave the others untouched; it then exits with
/// the failures' status (`.failure` when they are of different kinds), as `haul get` does.
struct ClientRun {
    private(set) var failures: [CommandFailure] = []

    /// Prints `failure` and remembers its status.
    mutating func report(_ failure: CommandFailure) {
        StandardStream.error.writeLine("haul: error: \(failure.message)")
        failures.append(failure)
    }

    /// Success without failures, their status when all are of one kind, else `.failure`.
    var status: ExitStatus {
        let statuses = Set(failures.map(\.status))
        if statuses.isEmpty { return .success }
        if statuses.count == 1, let only = statuses.first { return only }
        return .failure
    }

    /// Runs `body` against the daemon `options` name and exits with its status: success, the
    /// status of the failures `body` reported, or that of the failure it threw.
    static func perform(
        _ options: DaemonConnectionOptions, _ body: (DaemonClient, inout ClientRun) async throws(CommandFailure) -> Void
    ) async throws {
        var run = ClientRun()
        // `body`'s failure is reported inside, so this rethrows nothing.
        try await DaemonClient.with(options) { client in
            do throws(CommandFailure) {
                try await body(client, &run)
            } catch {
                run.report(error)
            }
        }
        let status = run.status
        if status != .success { throw ExitCode(status.rawValue) }
    }
}
