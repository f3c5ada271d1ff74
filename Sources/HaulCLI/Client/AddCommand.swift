import ArgumentParser
import Foundation
import Haul
import HaulDaemon

/// `haul add URL...`: hands downloads to a running daemon (aria2's `addUri`, one call per URL)
/// and prints each new GID, so that scripts can follow them with `haul status GID`.
struct AddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add downloads to a running haul daemon; prints one GID per URL.",
        discussion: """
            The daemon saves into its download directory (haul daemon --dir). --dir names a \
            directory inside it: a relative path is resolved against it, and a path that leaves \
            it is refused. URLs, --checksum and --header are checked before anything is added; a URL \
            the daemon refuses is reported and the others are still added.

            An HLS playlist (.m3u8, or --hls) or a Metalink 4 document (.meta4, or --metalink) is \
            added as one group (haul.addResource): the daemon fetches it, downloads its files into \
            the directory, and writes the local playlist (and joined file) when all are there, \
            even if this command is long gone. For those, the group's name is printed instead of \
            a GID. See docs/playlists.md.

            Exit status:
            \(ExitStatus.helpTable)
            """)

    @Argument(help: "The http or https URLs to download.")
    var urls: [String]

    @Option(name: [.customShort("d"), .customLong("dir")], help: ArgumentHelp(
        "Directory inside the daemon's download directory (default: that directory).", valueName: "dir"))
    var directory: String?

    @Option(name: [.customShort("o"), .customLong("out")], help: ArgumentHelp(
        "File name to save as (only with exactly one URL).", valueName: "name"))
    var outputName: String?

    @Option(name: .customLong("header"), parsing: .singleValue, help: ArgumentHelp(
        "Extra request header for every URL; repeatable.", valueName: "Name: value"))
    var headers: [String] = []

    @Option(name: .customLong("checksum"), help: ArgumentHelp(
        "Expected digest, e.g. sha-256=HEX (sha256=, sha-1=, md5= work too); only with exactly one URL.",
        valueName: "type=hex"))
    var checksum: String?

    @Option(name: [.customShort("s"), .customLong("split")], help: ArgumentHelp(
        "Connections to split each download over when the server allows it (default: the daemon's -s; at most -x).",
        valueName: "n"))
    var split: Int?

    @Option(name: [.customShort("x"), .customLong("max-connection-per-server")], help: ArgumentHelp(
        "Most connections per download, 1 to \(DaemonTransferOptions.connectionCeiling) (default: the daemon's -x).",
        valueName: "n"))
    var maxConnectionsPerServer: Int?

    @Option(name: .customLong("max-download-limit"), help: ArgumentHelp(
        "Speed limit of each download in bytes per second, e.g. 512K (0: none; default: the daemon's).",
        valueName: "rate"))
    var maxDownloadLimit: String?

    @Flag(name: .customLong("pause"), help: "Add the downloads paused; `haul resume` starts them.")
    var paused = false

    @OptionGroup var resources: ResourceOptions

    @OptionGroup var connection: DaemonConnectionOptions

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        for url in urls {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", parsed.host?.isEmpty == false
            else {
                throw ValidationError("'\(url)' is not an http or https URL")
            }
        }
        if urls.count > 1, outputName != nil { throw ValidationError("--out names one file; give exactly one URL with it") }
        if urls.count > 1, checksum != nil { throw ValidationError("--checksum describes one file; give exactly one URL with it") }
        if let outputName, outputName.isEmpty || outputName.contains("/") {
            throw ValidationError("--out must be a file name without '/'; use --dir for the directory")
        }
        if directory?.isEmpty == true { throw ValidationError("--dir must not be empty") }
        try TransferOptions.check(split: split, maxConnectionsPerServer: maxConnectionsPerServer, maxDownloadLimit: maxDownloadLimit)
        do {
            if let checksum { _ = try Checksum(parsing: checksum) }
            for header in headers { _ = try HeaderField(parsing: header) }
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The options of `haul.addResource`.
    struct ResourceAddOptions: Encodable, Sendable {
        var directory: String?
        var kind: String?
        var variant: String?
        var join: Bool?
        var allowKeyHosts: Bool?
        var headers: [HeaderField]?
    }

    private func resourceOptions() throws -> ResourceAddOptions {
        ResourceAddOptions(
            directory: directory, variant: resources.variant, join: resources.join ? true : nil,
            allowKeyHosts: resources.allowKeyHosts ? true : nil,
            headers: try headers.isEmpty ? nil : headers.map { try HeaderField(parsing: $0) })
    }

    var options: Aria2AddOptions {
        Aria2AddOptions(
            dir: directory, out: outputName, header: headers.isEmpty ? nil : headers, checksum: checksum,
            split: split.map(String.init), maxConnectionPerServer: maxConnectionsPerServer.map(String.init),
            maxDownloadLimit: maxDownloadLimit.flatMap(DownloadPlan.byteCount).map(String.init),
            pause: paused ? "true" : nil)
    }

    func run() async throws {
        let options = self.options
        let urls = self.urls
        let documents = Dictionary(resources.partition(urls).documents, uniquingKeysWith: { first, _ in first })
        let resourceOptions = try resourceOptions()
        try await ClientRun.perform(connection) { client, run throws(CommandFailure) in
            for url in urls {
                do throws(CommandFailure) {
                    if let kind = documents[url] {
                        var options = resourceOptions
                        options.kind = kind.rawValue
                        StandardStream.output.writeLine(try await client.addResource(url, options: options))
                        continue
                    }
                    StandardStream.output.writeLine(try await client.addUri(url, options: options))
                } catch where error.status == .daemonUnavailable {
                    // No daemon: every other URL would fail the same way.
                    run.report(error)
                    return
                } catch {
                    run.report(CommandFailure(error.status, "\(url): \(error.message)"))
                }
            }
        }
    }
}
