/// The exit statuses of `haul get`, `haul daemon` and the daemon's client commands: one per
/// kind of failure, so that scripts can react to what went wrong (retry later on a network
/// error, give up on a 404, alert on a checksum mismatch, leave alone a daemon that is already
/// running, start a daemon when none answers) without parsing messages.
///
/// Which `HaulError` code leads to which status is in `ExitStatus+HaulError.swift`.
enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    case destination = 3
    case network = 4
    case httpStatus = 5
    case checksumMismatch = 6
    case serverMisbehaved = 7
    case fileExists = 8
    case redirect = 9
    case daemonAlreadyRunning = 10
    case cannotListen = 11
    case daemonUnavailable = 12
    case daemonRefused = 13
    case certificate = 14
    case storeUnavailable = 15
    case interrupted = 130
    case terminated = 143

    /// One line for `haul get --help` and the README.
    var meaning: String {
        switch self {
        case .success: "all downloads completed (skipped files count as completed)"
        case .failure: "failures of different kinds, or an unexpected error"
        case .usage: "usage: bad option, URL, scheme, proxy, checksum or input file"
        case .destination: "destination: directory cannot be made or written, disk full"
        case .network: "network: connection failed or timed out, after retries"
        case .httpStatus: "the server answered with an HTTP error status"
        case .checksumMismatch: "checksum mismatch: the bytes are not the expected ones"
        case .serverMisbehaved: "the server misbehaved: wrong length or unusable response"
        case .fileExists: "the file exists and --conflict is fail, or another haul writes it"
        case .redirect: "redirect problem: too many, a loop, or an unsupported target"
        case .daemonAlreadyRunning: "haul daemon: another daemon holds the socket or state directory"
        case .cannotListen: "haul daemon: cannot listen (port in use, socket path unusable)"
        case .daemonUnavailable: "haul add/ls/…: no daemon answers at the socket or --rpc URL"
        case .daemonRefused: "haul add/ls/…: the daemon refused: unknown GID, wrong state or secret"
        case .certificate: "TLS: server certificate untrusted or wrong host; bad client cert"
        case .storeUnavailable: "haul daemon: the --store database cannot be reached or used"
        case .interrupted: "interrupted by SIGINT (Ctrl-C); part files are kept"
        case .terminated: "stopped by SIGTERM; part files are kept"
        }
    }

    /// The status a process conventionally reports after being stopped by `signal` (128 + N).
    static func stopped(by signal: Int32) -> ExitStatus {
        ExitStatus(rawValue: 128 + signal) ?? .interrupted
    }
}
