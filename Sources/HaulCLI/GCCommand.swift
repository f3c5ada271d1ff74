import ArgumentParser
import Foundation
import Haul

/// `haul gc`: applies a retention rule to every session of a store and compacts the file. The
/// engine already keeps history bounded as it runs (see the README's "History" section); this
/// is for reclaiming space at once, or for a tighter rule than the built-in one.
struct GCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Forget old finished downloads and compact the download store.",
        discussion: """
            In every session of the store (haul get's, the daemon's and its apps'), finished \
            downloads (completed, failed, removed) beyond the newest --keep, and those added \
            more than --max-age-days ago, are deleted, and unacknowledged events beyond \
            --max-events; files on disk are never touched. Then the database file is rebuilt \
            without its free pages. A running daemon may keep using the store meanwhile.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @Option(name: .customLong("state-dir"), help: ArgumentHelp(
        "Where the download store lives (default $HAUL_STATE_DIR, else $XDG_STATE_HOME/haul, else ~/.local/state/haul).",
        valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("keep"), help: ArgumentHelp("Finished downloads kept per session, newest first.", valueName: "n"))
    var keep = 1_000

    @Option(name: .customLong("max-age-days"), help: ArgumentHelp(
        "Also delete finished downloads added more than this many days ago.", valueName: "days"))
    var maxAgeDays: Int?

    @Option(name: .customLong("max-events"), help: ArgumentHelp(
        "Unacknowledged events kept per session, newest first.", valueName: "n"))
    var maxEvents = 100_000

    func validate() throws {
        if keep < 0 { throw ValidationError("--keep must be 0 or more") }
        if let maxAgeDays, maxAgeDays < 0 { throw ValidationError("--max-age-days must be 0 or more") }
        if maxEvents < 1 { throw ValidationError("--max-events must be at least 1") }
    }

    func run() async throws {
        let retention = DownloadManager.Retention(
            maxFinished: keep, maxAge: maxAgeDays.map { .seconds(Int64($0) * 24 * 3600) }, maxKeptEvents: maxEvents)
        let directory = StateDirectoryOption.resolve(stateDirectory)
        do {
            let done = try await DownloadManager.compactStore(stateDirectory: directory, retention: retention)
            StandardStream.output.writeLine(
                "haul gc: deleted \(done.downloadsDeleted) finished downloads; store \(HumanReadable.bytes(done.bytesBefore)) -> \(HumanReadable.bytes(done.bytesAfter))")
        } catch {
            StandardStream.error.writeLine("haul gc: error: \(error.message)")
            throw ExitCode(ExitStatus(for: error).rawValue)
        }
    }
}
