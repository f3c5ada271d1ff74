import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a `haul daemon` listens for JSON-RPC, as a client addresses it.
///
/// The unix socket is the default way in: its mode (0600, in a 0700 directory) already admits
/// only the daemon's owner, so no secret is needed there. TCP is for tools that cannot speak to
/// a socket (aria2 front-ends, browser extensions) and needs the daemon's secret.
public enum DaemonEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The daemon's unix socket.
    case unixSocket(path: String)
    /// The full URL of the daemon's JSON-RPC endpoint, e.g. `http://127.0.0.1:6800/jsonrpc`.
    case url(URL)

    /// aria2's RPC port, which Haul keeps so that aria2 clients find the daemon unchanged.
    public static let defaultTCPPort = 6800
    /// The path of the JSON-RPC endpoint on both transports.
    package static let rpcPath = "/jsonrpc"
    /// The socket's file name inside the runtime directory.
    package static let socketFileName = "haul.sock"

    /// The `/jsonrpc` endpoint on `host:port` over TCP.
    public static func tcp(host: String = "127.0.0.1", port: Int = defaultTCPPort) -> DaemonEndpoint {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        // A host and port that form a valid authority always make a URL.
        return .url(URL(string: "http://\(bracketed):\(port)\(rpcPath)")!)
    }

    /// The socket a daemon started without `--socket` listens on, and so where clients look
    /// first: `$XDG_RUNTIME_DIR/haul/haul.sock`, else `/tmp/haul-UID/haul.sock`.
    public static var defaultSocketPath: String {
        defaultSocketPath(environment: ProcessInfo.processInfo.environment, userID: UInt32(getuid()))
    }

    /// `defaultSocketPath` for a given environment and user, so that it can be tested.
    package static func defaultSocketPath(environment: [String: String], userID: UInt32) -> String {
        defaultRuntimeDirectory(environment: environment, userID: userID) + "/" + socketFileName
    }

    /// The directory that holds the daemon's socket: `$XDG_RUNTIME_DIR/haul`, else
    /// `/tmp/haul-UID`.
    ///
    /// `$XDG_RUNTIME_DIR` (`/run/user/UID` under systemd) is private to the user and emptied at
    /// logout and reboot, which is what a socket wants. Without it (a container, a cron job) a
    /// per-user directory under /tmp stands in; the daemon checks that it owns that directory
    /// and that it is not a symlink before trusting it. The XDG spec says relative values are
    /// invalid and must be ignored.
    package static func defaultRuntimeDirectory(environment: [String: String], userID: UInt32) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/haul"
        }
        return "/tmp/haul-\(userID)"
    }

    public var description: String {
        switch self {
        case .unixSocket(let path): path
        case .url(let url): url.absoluteString
        }
    }

    /// Whether calls over this endpoint need the daemon's secret.
    package var requiresSecret: Bool {
        if case .url = self { return true }
        return false
    }
}
