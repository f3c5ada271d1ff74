import ArgumentParser

/// The downloads `haul pause` and `haul resume` act on: GIDs, or `--all`.
struct GIDSelection: ParsableArguments {
    @Argument(help: "GIDs of the downloads (16 hex digits, or unique prefixes).")
    var gids: [String] = []

    @Flag(name: .customLong("all"), help: "Every download instead of the GIDs given.")
    var all = false

    func validate() throws {
        if all, !gids.isEmpty { throw ValidationError("give GIDs or --all, not both") }
        if !all, gids.isEmpty { throw ValidationError("give at least one GID, or --all") }
        try GIDArgument.validate(gids)
    }
}

/// Pausing and resuming: one aria2 call per GID (`pause`/`unpause`), or one for all
/// (`pauseAll`/`unpauseAll`), and a line per download changed.
enum StateChange {
    struct Methods {
        let one: String
        let all: String
        /// The past participle for the output: `paused 2089b05ecca3d829`.
        let verb: String
        /// What `--all` changed, for its line.
        let allDescription: String
    }

    static let pause = Methods(
        one: "aria2.pause", all: "aria2.pauseAll", verb: "paused", allDescription: "every active and waiting download")
    static let resume = Methods(
        one: "aria2.unpause", all: "aria2.unpauseAll", verb: "resumed", allDescription: "every paused download")

    static func perform(_ methods: Methods, _ selection: GIDSelection, _ connection: DaemonConnectionOptions) async throws {
        try await ClientRun.perform(connection) { client, run throws(CommandFailure) in
            if selection.all {
                try await client.actOnAll(methods.all)
                StandardStream.output.writeLine("\(methods.verb) \(methods.allDescription)")
                return
            }
            for gid in selection.gids {
                do throws(CommandFailure) {
                    let changed = try await client.act(methods.one, on: gid)
                    StandardStream.output.writeLine("\(methods.verb) \(changed)")
                } catch {
                    run.report(error)
                    if error.status == .daemonUnavailable { return }
                }
            }
        }
    }
}
