import ArgumentParser
import Foundation
import Haul

/// aria2's proxy options for `haul get`, over the environment variables curl reads
/// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`): an option wins over its variable.
struct ProxyOptions: ParsableArguments {
    @Option(name: .customLong("all-proxy"), help: ArgumentHelp(
        "HTTP proxy for every URL, http://[user:password@]host:port (default: $all_proxy).", valueName: "url"))
    var allProxy: String?

    @Option(name: .customLong("http-proxy"), help: ArgumentHelp(
        "HTTP proxy for http URLs (default: $http_proxy, else --all-proxy).", valueName: "url"))
    var httpProxy: String?

    @Option(name: .customLong("https-proxy"), help: ArgumentHelp(
        "HTTP proxy for https URLs, reached with CONNECT (default: $https_proxy, else --all-proxy).", valueName: "url"))
    var httpsProxy: String?

    @Option(name: .customLong("no-proxy"), help: ArgumentHelp(
        "Comma-separated hosts and domains reached directly, * for all (default: $no_proxy).", valueName: "hosts"))
    var noProxy: String?

    func validate() throws {
        for (name, value) in [("--all-proxy", allProxy), ("--http-proxy", httpProxy), ("--https-proxy", httpsProxy)] {
            if let value, ProxySettings.Proxy(url: value) == nil {
                throw ValidationError("\(name) must be an http proxy such as http://user:password@host:3128, got '\(value)'")
            }
        }
    }

    /// The settings for this run, and the environment values that were ignored (not http proxies).
    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) -> (ProxySettings, ignored: [String]) {
        var (settings, ignored) = ProxySettings.fromEnvironment(environment)
        if let all = allProxy.flatMap(ProxySettings.Proxy.init(url:)) {
            settings.http = all
            settings.https = all
        }
        if let http = httpProxy.flatMap(ProxySettings.Proxy.init(url:)) { settings.http = http }
        if let https = httpsProxy.flatMap(ProxySettings.Proxy.init(url:)) { settings.https = https }
        if let noProxy { settings.noProxy = ProxySettings.hostList(noProxy) }
        return (settings, ignored)
    }
}
