import ArgumentParser
import Foundation
import Haul
import HaulDaemon

/// `haul daemon`: the transfer service. Downloads live in it, not in the processes that asked
/// for them; clients (`BackgroundSession`, `haul add`/`ls`/…, aria2 front-ends) drive it over
/// JSON-RPC on its unix socket or on loopback TCP.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the transfer service: aria2-compatible JSON-RPC on a unix socket and loopback TCP.",
        discussion: """
            The daemon listens on a unix socket (mode 0600, in a 0700 directory; default \
            $XDG_RUNTIME_DIR/haul/haul.sock, else /tmp/haul-UID/haul.sock) and on TCP \
            127.0.0.1:6800, both at /jsonrpc over HTTP POST and WebSocket. When it is ready it \
            prints one line on standard error (tcp=off with --no-tcp):
              haul daemon: ready socket=PATH tcp=HOST:PORT pid=PID

            Only one daemon may use a state directory or a socket at a time; a second one exits \
            with status \(ExitStatus.daemonAlreadyRunning.rawValue) and names the PID of the \
            first. A socket left by a daemon that was killed is removed and replaced. SIGTERM or \
            SIGINT stop the daemon gracefully: requests in flight are answered, transfers are \
            checkpointed, the socket is removed, and it exits with 0.

            The transfer options hold for every session. Downloads added over aria2's methods \
            (aria2 front-ends, haul add) start from -s, -x and --max-download-limit and may set \
            their own; --max-overall-download-limit is one limit for all downloads of the \
            daemon together.

            Exit status:
            \(exitStatusTable)
            """)

    /// The statuses `haul daemon` exits with (the others belong to `haul get`).
    static let exitStatusTable = [
        (ExitStatus.success, "stopped by SIGTERM, SIGINT or a shutdown request"),
        (.failure, "an unexpected error"),
        (.usage, "usage: bad option"),
        (.destination, "the state directory cannot be created or locked"),
        (.daemonAlreadyRunning, "another daemon holds the socket or the state directory"),
        (.cannotListen, "cannot listen: port in use, socket path unusable or unsafe"),
        (.storeUnavailable, "the --store database does not answer within --store-wait, or refuses"),
    ].map { status, meaning in
        let number = String(status.rawValue)
        return String(repeating: " ", count: max(0, 4 - number.count)) + number + "  " + meaning
    }.joined(separator: "\n")

    @Option(name: .customLong("socket"), help: ArgumentHelp(
        "The unix socket to listen on (default: $XDG_RUNTIME_DIR/haul/haul.sock, else /tmp/haul-UID/haul.sock).",
        valueName: "path"))
    var socketPath: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp(
        "Where the download store lives (default: $HAUL_STATE_DIR, else $XDG_STATE_HOME/haul, else ~/.local/state/haul).",
        valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("store"), help: ArgumentHelp(
        "Keep sessions and downloads in this PostgreSQL database instead of the state directory's SQLite file: postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] (the password may come from $PGPASSWORD). The state directory still holds the lock, the secret and the resource book.",
        valueName: "url"))
    var store: String?

    @Option(name: .customLong("store-wait"), help: ArgumentHelp(
        "Seconds to keep trying a --store server that does not answer at start (default: 30); then exit \(ExitStatus.storeUnavailable.rawValue).",
        valueName: "seconds"))
    var storeWait: Double = 30

    @Option(name: .customLong("fleet-slots"), help: ArgumentHelp(
        "With --store: downloads of a session this daemon runs at once (default: \(FleetMembership.defaultSlots)). Daemons on one database form a fleet: each claims downloads by lease, and --max-concurrent-downloads and a session's limits count across the fleet.",
        valueName: "n"))
    var fleetSlots: Int = FleetMembership.defaultSlots

    @Option(name: .customLong("fleet-lease"), help: ArgumentHelp(
        "With --store: seconds a download's lease lasts without renewal (default: 30, renewed every third of it); a daemon that dies has its downloads taken over by the others after at most this long.",
        valueName: "seconds"))
    var fleetLease: Double = 30

    @Option(name: .customLong("rpc-listen-port"), help: ArgumentHelp(
        "The TCP port for JSON-RPC (default: 6800; 0 picks a free one, printed when ready).", valueName: "n"))
    var rpcListenPort: Int?

    @Flag(name: .customLong("rpc-listen-all"), help: "Listen for JSON-RPC on every IPv4 address (0.0.0.0), not only 127.0.0.1.")
    var rpcListenAll = false

    @Flag(name: .customLong("no-tcp"), help: "Do not listen on TCP at all; only the unix socket.")
    var noTCP = false

    @Option(name: .customLong("rpc-secret"), help: ArgumentHelp(
        "The secret TCP clients must send (aria2's token:SECRET).", valueName: "secret"))
    var rpcSecret: String?

    @Flag(name: .customLong("rpc-allow-origin-all"), help: "Let web pages of any origin call JSON-RPC from a browser (CORS, as aria2's flag).")
    var rpcAllowOriginAll = false

    @Option(name: .customLong("rpc-allow-origin"), help: ArgumentHelp(
        "Let web pages of this origin (scheme://host[:port]) call JSON-RPC from a browser; repeatable.", valueName: "origin"))
    var rpcAllowOrigin: [String] = []

    @Option(name: .customLong("max-concurrent-downloads"), help: ArgumentHelp(
        "Downloads fetching at once in each session.", valueName: "n"))
    var maxConcurrentDownloads: Int?

    @Option(name: .customLong("dir"), help: ArgumentHelp(
        "Where aria2 clients' downloads go (aria2's --dir; default: the current directory). Their dir and out options cannot leave it.",
        valueName: "dir"))
    var downloadDirectory: String?

    @Option(name: .customLong("max-download-result"), help: ArgumentHelp(
        "Stopped (completed, failed, removed) downloads aria2's methods keep, as aria2; the oldest beyond it are forgotten.",
        valueName: "n"))
    var maxDownloadResult = 1_000

    @Option(name: .customLong("allow-dir"), help: ArgumentHelp(
        "Another directory that haul.* calls over TCP may download into (repeatable). Over TCP they may use only --dir and these; over the unix socket, any directory.",
        valueName: "dir"))
    var allowedDirectories: [String] = []

    @OptionGroup(title: "Transfers")
    var transfers: TransferOptions

    @OptionGroup(title: "Retries")
    var retrying: DaemonRetryOptions

    @OptionGroup(title: "TLS")
    var tls: TLSOptions

    @OptionGroup(title: "Proxies")
    var proxies: ProxyOptions

    @Option(name: .customLong("log-level"), help: ArgumentHelp(
        "Log messages on standard error from this level up: \(DaemonLogging.levelNames.joined(separator: ", ")).",
        valueName: "level"))
    var logLevel = DaemonLogging.defaultLevelName

    func validate() throws {
        if let rpcListenPort, !(0...65535).contains(rpcListenPort) {
            throw ValidationError("--rpc-listen-port must be between 0 and 65535")
        }
        if noTCP && (rpcListenPort != nil || rpcListenAll) {
            throw ValidationError("--no-tcp cannot be combined with --rpc-listen-port or --rpc-listen-all")
        }
        if let store {
            do {
                _ = try PostgresAddress(parsing: store)
            } catch {
                throw ValidationError("--store: \(error.message)")
            }
        }
        if !(storeWait >= 0 && storeWait <= 86_400) { throw ValidationError("--store-wait must be between 0 and 86400 seconds") }
        if !(1...10_000).contains(fleetSlots) { throw ValidationError("--fleet-slots must be between 1 and 10000") }
        if !(fleetLease >= 1 && fleetLease <= 3_600) { throw ValidationError("--fleet-lease must be between 1 and 3600 seconds") }
        if let maxConcurrentDownloads, maxConcurrentDownloads < 1 {
            throw ValidationError("--max-concurrent-downloads must be at least 1")
        }
        if maxDownloadResult < 0 { throw ValidationError("--max-download-result must be 0 or more") }
        for origin in rpcAllowOrigin where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw ValidationError("--rpc-allow-origin takes an origin such as http://localhost:8080, got \(origin)")
        }
        if rpcSecret?.isEmpty == true { throw ValidationError("--rpc-secret must not be empty") }
        if let socketPath, !socketPath.hasPrefix("/") { throw ValidationError("--socket must be an absolute path") }
        if !DaemonLogging.levelNames.contains(logLevel.lowercased()) {
            throw ValidationError("--log-level must be one of \(DaemonLogging.levelNames.joined(separator: ", "))")
        }
    }

    mutating func run() async throws {
        guard let logger = DaemonLogging.bootstrap(levelName: logLevel) else { throw ExitCode(ExitStatus.usage.rawValue) }
        DaemonAssembly.prepareProcess()
        var options = DaemonAssembly.Options(
            downloadDirectory: URL(fileURLWithPath: downloadDirectory ?? FileManager.default.currentDirectoryPath),
            allowedDirectories: allowedDirectories.map { URL(fileURLWithPath: $0) },
            transfers: transfers.daemonTransfers, maxDownloadResult: maxDownloadResult)
        options.retry = retrying.policy
        options.tls = tls.settings
        do {
            options.proxy = try proxies.settings()
        } catch {
            // Never started without the proxy it was given: its downloads would go out directly.
            StandardStream.error.writeLine("haul daemon: error: \(error.message)")
            throw ExitCode(ExitStatus(for: error).rawValue)
        }
        if tls.checkCertificate == false { StandardStream.error.writeLine(TLSOptions.insecureWarning) }
        if let store {
            let location = try StoreLocation(parsing: store, stateDirectory: resolvedStateDirectory)
            let wait = Duration.milliseconds(Int64(storeWait * 1000))
            do {
                // Reached and migrated before anything listens: a daemon that cannot keep its
                // downloads must not accept any.
                _ = try await DownloadManager.storedSessions(store: location, waitingUpTo: wait)
            } catch {
                StandardStream.error.writeLine("haul daemon: error: \(error.message)")
                throw ExitCode(ExitStatus.storeUnavailable.rawValue)
            }
            options.store = location
            options.storeWait = wait
            // On PostgreSQL a daemon is always a fleet member (a fleet of one is fine): it
            // runs only the downloads it claims by lease (docs/fleet.md).
            let fleet = FleetMembership(slots: fleetSlots, leaseDuration: .milliseconds(Int64(fleetLease * 1000)))
            options.fleet = fleet
            StandardStream.error.writeLine(
                "haul daemon: fleet member \(fleet.owner): up to \(fleet.slots) downloads per session, leases of \(fleetLease) s")
        }
        let composed = options
        let daemon = Daemon(configuration: daemonConfiguration, logger: logger) { context in
            try await DaemonAssembly.compose(context, options: composed)
        }
        let status: ExitStatus
        do {
            try await daemon.run { addresses in
                StandardStream.error.writeLine(addresses.readyLine(processID: ProcessInfo.processInfo.processIdentifier))
            }
            status = .success
        } catch let error as DaemonError {
            StandardStream.error.writeLine("haul daemon: error: \(error.message)")
            status = Self.status(for: error)
        } catch let error as HaulError {
            StandardStream.error.writeLine("haul daemon: error: \(error.message)")
            status = ExitStatus(for: error)
        } catch {
            StandardStream.error.writeLine("haul daemon: error: \(error)")
            status = .failure
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    static func status(for error: DaemonError) -> ExitStatus {
        switch error.kind {
        case .alreadyRunning: .daemonAlreadyRunning
        case .cannotListen: .cannotListen
        case .fileSystem: .destination
        }
    }

    var daemonConfiguration: DaemonConfiguration {
        var configuration = DaemonConfiguration(stateDirectory: resolvedStateDirectory)
        configuration.socketPath = socketPath
        if noTCP {
            configuration.tcp = nil
        } else {
            let port = rpcListenPort ?? DaemonEndpoint.defaultTCPPort
            configuration.tcp = rpcListenAll ? .allAddresses(port: port) : .init(port: port)
        }
        configuration.rpcSecret = rpcSecret
        configuration.allowedOrigins = RPCOriginPolicy(allowsAll: rpcAllowOriginAll, origins: Set(rpcAllowOrigin))
        configuration.maxConcurrentDownloads = maxConcurrentDownloads
        return configuration
    }

    /// `--state-dir`, else `$HAUL_STATE_DIR`, else the library's default: as `haul get` does,
    /// so that both find the same store.
    private var resolvedStateDirectory: URL { StateDirectoryOption.resolve(stateDirectory) }
}
