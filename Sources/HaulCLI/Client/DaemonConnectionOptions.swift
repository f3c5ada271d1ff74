import ArgumentParser
import Foundation
import Haul

/// Where the client commands (`haul add`, `ls`, `status`, `pause`, `resume`, `rm`, `watch`)
/// find the daemon: its unix socket (the default, no secret needed: the socket's mode admits
/// only its owner), or its TCP endpoint with the daemon's secret.
struct DaemonConnectionOptions: ParsableArguments {
    /// The environment variable that holds the secret when `--secret` is not given, so that it
    /// need not appear in the process list or the shell history.
    static let secretVariable = "HAUL_RPC_SECRET"

    @Option(name: .customLong("socket"), help: ArgumentHelp(
        "The daemon's unix socket (default: $XDG_RUNTIME_DIR/haul/haul.sock, else /tmp/haul-UID/haul.sock).",
        valueName: "path"))
    var socketPath: String?

    @Option(name: .customLong("rpc"), help: ArgumentHelp(
        "Talk to the daemon over TCP instead, e.g. http://127.0.0.1:6800/jsonrpc (needs the secret).",
        valueName: "url"))
    var rpcURL: String?

    @Option(name: .customLong("secret"), help: ArgumentHelp(
        "The daemon's RPC secret for --rpc (default: $HAUL_RPC_SECRET; the daemon keeps it in rpc-secret in its state directory).",
        valueName: "secret"))
    var secret: String?

    func validate() throws {
        if socketPath != nil, rpcURL != nil {
            throw ValidationError("--socket and --rpc name two different ways in; give one of them")
        }
        if let socketPath, socketPath.isEmpty { throw ValidationError("--socket must not be empty") }
        if let rpcURL { _ = try Self.endpointURL(rpcURL) }
        if secret?.isEmpty == true { throw ValidationError("--secret must not be empty") }
    }

    /// The daemon's address: `--rpc`, else `--socket`, else the default socket.
    var endpoint: DaemonEndpoint {
        if let rpcURL, let url = try? Self.endpointURL(rpcURL) { return .url(url) }
        return .unixSocket(path: socketPath ?? DaemonEndpoint.defaultSocketPath)
    }

    /// `--secret`, else `$HAUL_RPC_SECRET` when it is set and not empty.
    var resolvedSecret: String? {
        resolvedSecret(environment: ProcessInfo.processInfo.environment)
    }

    func resolvedSecret(environment: [String: String]) -> String? {
        if let secret { return secret }
        guard let value = environment[Self.secretVariable], !value.isEmpty else { return nil }
        return value
    }

    /// The JSON-RPC URL for `--rpc`: an http or https URL with a host; without a path, aria2's
    /// `/jsonrpc` is meant (so `http://127.0.0.1:6800` works as people type it).
    static func endpointURL(_ text: String) throws -> URL {
        guard var components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty
        else {
            throw ValidationError("--rpc must be an http:// or https:// URL such as http://127.0.0.1:6800/jsonrpc, got '\(text)'")
        }
        if components.path.isEmpty || components.path == "/" { components.path = DaemonEndpoint.rpcPath }
        guard let url = components.url else {
            throw ValidationError("--rpc '\(text)' is not a usable URL")
        }
        return url
    }
}
