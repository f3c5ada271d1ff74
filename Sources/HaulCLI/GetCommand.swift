import ArgumentParser
import Foundation
import Haul

/// `haul get URL...`: one-shot downloads from the shell, like curl, wget or aria2c, that
/// resume where an interrupted run stopped and never splice old and new bytes.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download files over HTTP(S); run the same command again to continue an interrupted run.",
        discussion: """
            Input file (-i FILE, or -i - for standard input): one URL per line; blank lines and \
            lines starting with # are ignored. Lines indented by whitespace are options for the \
            URL above them, as in aria2: out=NAME, dir=DIR (relative to the current directory, \
            like -d), checksum=TYPE=HEX, header=Name: value, split=N, max-download-limit=RATE.

            Segmented downloads (aria2's options): with -x N (default 1), a download is split \
            over up to -s connections (default 5) when the server offers byte ranges with a \
            strong validator, and the file is at least twice --min-split-size. Connections that \
            finish take half of the largest remaining segment.

            Part files (.haul-KEY.part, and .haul-KEY.done once verified) live in the destination \
            directory until the file is renamed into place. After Ctrl-C, running the same \
            command again continues from the bytes on disk, and starts over when the file on \
            the server has changed.

            Exit status:
            \(ExitStatus.helpTable)

            When several downloads fail for the same kind of reason, haul exits with that \
            kind's status; for mixed kinds it exits with 1.
            """)

    @Argument(help: "The http or https URLs to download.")
    var urls: [String] = []

    @Option(name: [.customShort("i"), .customLong("input-file")], help: ArgumentHelp(
        "Read URLs (and per-URL options) from FILE; - reads standard input.", valueName: "file"))
    var inputFile: String?

    @Option(name: [.customShort("d"), .customLong("dir")], help: ArgumentHelp(
        "Directory to save into; it is created (with its parents) when missing.", valueName: "dir"))
    var directory = "."

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp(
        "File name to save as (only with exactly one URL).", valueName: "name"))
    var outputName: String?

    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Downloads fetching at once.")
    var jobs = 4

    @Option(name: .customLong("checksum"), parsing: .singleValue, help: ArgumentHelp(
        "Expected digest of the single URL, e.g. sha256=HEX (aria2's sha-256=HEX works too); repeatable.",
        valueName: "type=hex"))
    var checksums: [String] = []

    @Option(name: .customLong("header"), parsing: .singleValue, help: ArgumentHelp(
        "Extra request header for every URL; repeatable.", valueName: "Name: value"))
    var headers: [String] = []

    @OptionGroup var retrying: RetryOptions

    @Option(name: .customLong("http-user"), help: ArgumentHelp(
        "User name for HTTP Basic authentication, sent to each URL's own server only (never after a redirect to another).",
        valueName: "user"))
    var httpUser: String?

    @Option(name: .customLong("http-passwd"), help: ArgumentHelp("Password for --http-user.", valueName: "password"))
    var httpPassword: String?

    @Flag(name: .customLong("netrc-optional"), help: "Use credentials from ~/.netrc (or $NETRC), if it exists, for URLs without their own.")
    var netrcOptional = false

    @Option(help: "What to do when the file name is taken: rename (name (1).ext), overwrite, skip, fail.")
    var conflict = ConflictPolicy.rename

    @Option(name: .customLong("max-per-host"), help: ArgumentHelp(
        "Downloads fetching at once against one host (default: only --jobs applies).", valueName: "n"))
    var maxPerHost: Int?

    @OptionGroup var transfers: TransferOptions

    @OptionGroup var tls: TLSOptions

    @OptionGroup var proxies: ProxyOptions

    @OptionGroup var resources: ResourceOptions

    @Flag(name: [.customShort("q"), .long], help: "Print errors only.")
    var quiet = false

    @Flag(help: "Print every event as one JSON object per line, then a summary object.")
    var json = false

    @Option(name: .customLong("state-dir"), help: ArgumentHelp(
        "Where haul keeps its download store, so that a re-run continues (default: $HAUL_STATE_DIR, else $XDG_STATE_HOME/haul, else ~/.local/state/haul).",
        valueName: "dir"))
    var stateDirectory: String?

    /// For testing and tuning only: how many bytes a transfer receives between checkpoints (a
    /// flush of the part file and an update of its resume record). A kill -9 loses at most
    /// this much. The library's default is 16 MiB (or 5 s); tests lower it so that a small,
    /// short download has a resume record before it is killed.
    @Option(name: .customLong("checkpoint-bytes"), help: ArgumentHelp(visibility: .hidden))
    var checkpointBytes: Int64?

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let maxPerHost, maxPerHost < 1 { throw ValidationError("--max-per-host must be at least 1") }
        if let checkpointBytes, checkpointBytes < 1 { throw ValidationError("--checkpoint-bytes must be at least 1") }
        if quiet && json { throw ValidationError("--quiet and --json cannot be combined") }
        if httpPassword != nil, httpUser == nil { throw ValidationError("--http-passwd needs --http-user") }
        if let httpUser, httpUser.contains(":") { throw ValidationError("--http-user cannot contain ':' (Basic authentication separates user and password with it)") }
    }

    mutating func run() async throws {
        if tls.checkCertificate == false { StandardStream.error.writeLine(TLSOptions.insecureWarning) }
        let status: ExitStatus
        do {
            let partition = resources.partition(urls)
            let plan = try makePlan(urls: partition.plain, documents: partition.documents.count)
            let run = GetRun(
                plan: plan,
                documents: GetRun.Documents(
                    // -o or --checksum ask for one file: no document is looked for.
                    forced: partition.documents, probes: outputName == nil && checksums.isEmpty ? Set(partition.probes) : [],
                    directory: URL(fileURLWithPath: directory, isDirectory: true),
                    hls: try resources.hlsOptions(headers: plan.sharedHeaders)),
                configuration: try managerConfiguration(),
                stateDirectory: resolvedStateDirectory,
                mode: OutputMode.choose(quiet: quiet, json: json, stdoutIsTerminal: StandardStream.output.isTerminal))
            status = await run.run()
        } catch {
            StandardStream.error.writeLine("haul: error: \(error.message)")
            status = error.status
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    private func makePlan(urls: [String], documents: Int) throws(CommandFailure) -> DownloadPlan {
        let input = try inputFile.map { path throws(CommandFailure) in
            try InputFile.parse(Self.readInput(path), source: path == "-" ? "stdin" : path)
        } ?? []
        var plan = try DownloadPlan(urls: urls, input: input, options: DownloadPlan.Options(
            directory: directory, outputName: outputName, checksums: checksums,
            headers: basicAuthorization.map { [$0] + headers } ?? headers, conflictPolicy: conflict, maxBytesPerSecond: transfers.perDownloadLimit),
            documents: documents)
        if netrcOptional, let netrc = Netrc.load() { plan.requests = netrc.applied(to: plan.requests) }
        return plan
    }

    /// `--http-user`/`--http-passwd` as a header for every URL; the transport drops it (as any
    /// Authorization header) when a redirect leads to another server.
    private var basicAuthorization: String? {
        guard let httpUser else { return nil }
        let token = Data("\(httpUser):\(httpPassword ?? "")".utf8).base64EncodedString()
        return "Authorization: Basic \(token)"
    }

    private var resolvedStateDirectory: URL { StateDirectoryOption.resolve(stateDirectory) }

    /// The manager's settings; a proxy that cannot be used is a usage error (see `ProxyOptions`).
    private func managerConfiguration() throws(CommandFailure) -> DownloadManager.Configuration {
        var configuration = DownloadManager.Configuration(
            maxConcurrentDownloads: jobs,
            maxDownloadsPerHost: maxPerHost,
            retry: retrying.policy())
        // Set after init, so that the flush-before-placement threshold keeps its default.
        if let checkpointBytes { configuration.checkpointBytes = checkpointBytes }
        configuration.tls = tls.settings
        do {
            configuration.proxy = try proxies.settings()
        } catch {
            throw CommandFailure(error)
        }
        transfers.apply(to: &configuration)
        return configuration
    }

    private static func readInput(_ path: String) throws(CommandFailure) -> String {
        let data: Data?
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = FileManager.default.contents(atPath: path)
        }
        guard let data else { throw .usage("cannot read input file '\(path)'") }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .usage("input file '\(path)' is not UTF-8 text")
        }
        return text
    }
}

/// `--conflict rename|overwrite|skip|fail`, parsed from the raw values.
extension ConflictPolicy: ExpressibleByArgument {}
