import Foundation
import Haul

/// `haul.addResource(session, group, source, options)`: an HLS playlist or Metalink 4 document
/// added as one group, finished by the daemon when the group completes (see
/// `SessionHost+Resources`). `source` is an http(s) URL (a local file too, over the unix
/// socket only: a TCP client must not make the daemon read local files).
///
/// `options`: `directory` (absolute, or relative to the download directory, which is the
/// default; a relative one may not leave it, and over TCP no directory may leave the allowed
/// ones), `kind` (`hls` or `metalink`; default: by extension, then content type), `variant`
/// (as `--hls-variant`), `join`, `allowKeyHosts`, `headers` (`[{"name":…,"value":…}]`).
struct ResourceMethod: Sendable {
    struct Options: Decodable {
        var directory: String?
        var kind: String?
        var variant: String?
        var join: Bool?
        var allowKeyHosts: Bool?
        var headers: [HeaderField]?
    }

    let host: SessionHost
    let confinement: DirectoryConfinement

    func add(session: String, group: String, source: String, options: Options, over transport: RPCOrigin.Transport) async throws -> JSONValue {
        let isWeb = ["http", "https"].contains(URL(string: source)?.scheme?.lowercased() ?? "")
        if !isWeb, transport == .tcp {
            throw JSONRPCError.invalidParams("over TCP the source must be an http or https URL")
        }
        let downloadDirectory = confinement.roots[0]
        var directory: URL
        if let text = options.directory, !text.hasPrefix("/") {
            directory = try downloadDirectory.resolve(text, relativeTo: downloadDirectory.url, option: "directory")
        } else {
            directory = options.directory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? downloadDirectory.url
        }
        let probe = DownloadRequest(url: URL(string: "http://localhost/")!, directory: directory)
        directory = try confinement.confine([probe], over: transport)[0].directory
        var hls = HLSOptions(join: options.join ?? false, allowsKeysOnOtherHosts: options.allowKeyHosts ?? false, headers: options.headers ?? [])
        if let variant = options.variant { hls.variant = try VariantChoice(parsing: variant) }
        var kind: ResourcePlan.Kind?
        if let text = options.kind {
            guard let parsed = ResourcePlan.Kind(rawValue: text) else { throw JSONRPCError.invalidParams("kind is hls or metalink, got '\(text)'") }
            kind = parsed
        }
        let manager = try await host.manager(for: session)
        let plan = try await manager.planResource(source, kind: kind, directory: directory, hls: hls)
        // Metalink names may add subdirectories: each must be allowed too.
        _ = try confinement.confine(plan.requests, over: transport)
        return try HaulSessionMethods.json(try await host.addResource(session: session, group: group, plan: plan))
    }
}
