import ArgumentParser
import Foundation
import Haul

/// aria2's proxy options for `haul get` and `haul daemon`, over the environment variables curl
/// reads (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`): an option wins over its variable.
///
/// A proxy that is given (option or variable) but cannot be used is a usage error (exit 2),
/// never ignored: ignoring it would connect directly where the user asked for a proxy.
struct ProxyOptions: ParsableArguments {
    @Option(name: .customLong("all-proxy"), help: ArgumentHelp(
        "Proxy for every URL: http://[user:password@]host:port, socks5h://host:port or socks5://host:port (default: $all_proxy).",
        valueName: "url"))
    var allProxy: String?

    @Option(name: .customLong("http-proxy"), help: ArgumentHelp(
        "Proxy for http URLs, as --all-proxy (default: $http_proxy, else --all-proxy).", valueName: "url"))
    var httpProxy: String?

    @Option(name: .customLong("https-proxy"), help: ArgumentHelp(
        "Proxy for https URLs, as --all-proxy (default: $https_proxy, else --all-proxy).", valueName: "url"))
    var httpsProxy: String?

    @Option(name: .customLong("no-proxy"), help: ArgumentHelp(
        "Comma-separated hosts and domains reached directly, * for all (default: $no_proxy).", valueName: "hosts"))
    var noProxy: String?

    func validate() throws {
        for (name, value) in [("--all-proxy", allProxy), ("--http-proxy", httpProxy), ("--https-proxy", httpsProxy)] {
            guard let value else { continue }
            do {
                _ = try ProxySettings.Proxy.parse(value)
            } catch {
                throw ValidationError("\(name): \(error.message)")
            }
        }
    }

    /// The settings for this run. A variable is read only when no option takes its place, so
    /// that `--all-proxy` can stand in for an unusable `$all_proxy`; one that is read and cannot
    /// be used is an `.unsupportedProxy` error naming it.
    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws(HaulError) -> ProxySettings {
        var environment = environment
        if allProxy != nil || httpProxy != nil { environment["http_proxy"] = nil }
        if allProxy != nil || httpsProxy != nil { environment["https_proxy"] = nil; environment["HTTPS_PROXY"] = nil }
        if allProxy != nil || (httpProxy != nil && httpsProxy != nil) { environment["all_proxy"] = nil; environment["ALL_PROXY"] = nil }
        var settings = try ProxySettings.fromEnvironment(environment)
        if let allProxy {
            let all = try ProxySettings.Proxy.parse(allProxy)
            settings.http = all
            settings.https = all
        }
        if let httpProxy { settings.http = try ProxySettings.Proxy.parse(httpProxy) }
        if let httpsProxy { settings.https = try ProxySettings.Proxy.parse(httpsProxy) }
        if let noProxy { settings.noProxy = ProxySettings.hostList(noProxy) }
        return settings
    }
}
