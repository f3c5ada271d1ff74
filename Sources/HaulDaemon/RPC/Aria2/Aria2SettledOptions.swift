import Haul

/// An aria2 option whose value Haul has, and lists, but does not take over RPC: a setting of
/// the whole daemon (`timeout`, `min-split-size`, the proxies, …, from `haul daemon`'s command
/// line) or how Haul always works (`continue`).
///
/// Front-ends send such options back as they were listed (webui-aria2's settings dialog sends
/// every option of a download), so giving the value Haul has is accepted; asking for another is
/// refused with how to get it, rather than answered "OK" and ignored.
struct Aria2SettledOption: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// Compared as text.
        case text
        /// A whole number (seconds, a count).
        case whole
        /// Bytes, given as a number or with `K`/`M` (`20M` is `20971520`).
        case bytes
        /// A proxy URL; the listed form leaves out the credentials, so a value without them
        /// matches on kind (scheme), host and port, one with them must match them too.
        case proxy(ProxySettings.Proxy?)
    }

    /// In aria2's form, as listed; empty when Haul has none (then it is not listed).
    var value: String
    var kind: Kind
    /// How to get another value, for the refusal.
    var howToChange: String
    /// Whether aria2 lists it for one download (`getOption`) as well as globally.
    var perDownload = true

    /// Whether `text` asks for the value Haul has.
    func matches(_ text: String) -> Bool {
        switch kind {
        case .text: return text == value
        case .whole: return Int(text).map { String($0) == value } ?? false
        case .bytes:
            guard let given = try? Aria2OptionParser.bytes("", text) else { return false }
            return String(given) == value
        case .proxy(let proxy):
            guard let proxy else { return text.isEmpty }
            guard let given = ProxySettings.Proxy(url: text) else { return false }
            guard given.kind == proxy.kind, given.host == proxy.host, given.port == proxy.port else { return false }
            return given.username == nil || (given.username == proxy.username && given.password == proxy.password)
        }
    }
}

/// The settled options of a daemon, from its manager's configuration.
enum Aria2SettledOptions {
    static func of(_ configuration: DownloadManager.Configuration) -> [String: Aria2SettledOption] {
        let retry = configuration.retry
        let tls = configuration.tls
        let proxy = configuration.proxy
        var options: [String: Aria2SettledOption] = [
            "min-split-size": .init(value: String(configuration.minSegmentSize), kind: .bytes,
                                    howToChange: "start haul daemon with --min-split-size"),
            "timeout": .init(value: seconds(configuration.readTimeout), kind: .whole,
                             howToChange: "start haul daemon with --timeout"),
            "connect-timeout": .init(value: seconds(configuration.connectTimeout), kind: .whole,
                                     howToChange: "start haul daemon with --connect-timeout"),
            // aria2's 0 is "no limit": Haul's daemon keeps trying until --resource-timeout.
            "max-tries": .init(value: retry.waits ? "0" : String(retry.maxRetries + 1), kind: .whole,
                               howToChange: "start haul daemon with --retries and --resource-timeout"),
            "retry-wait": .init(value: seconds(retry.baseDelay), kind: .whole,
                                howToChange: "start haul daemon with --retry-wait"),
            "check-certificate": .init(value: String(tls.verifiesCertificates), kind: .text,
                                       howToChange: "start haul daemon with --check-certificate"),
            "ca-certificate": .init(value: tls.caCertificateFile ?? "", kind: .text,
                                    howToChange: "start haul daemon with --ca-certificate"),
            "certificate": .init(value: tls.clientCertificateFile ?? "", kind: .text,
                                 howToChange: "start haul daemon with --certificate"),
            "private-key": .init(value: tls.privateKeyFile ?? "", kind: .text,
                                 howToChange: "start haul daemon with --private-key"),
            "http-proxy": proxyOption(proxy.http, "--http-proxy"),
            "https-proxy": proxyOption(proxy.https, "--https-proxy"),
            "all-proxy": proxyOption(proxy.http == proxy.https ? proxy.http : nil, "--all-proxy"),
            "no-proxy": .init(value: proxy.noProxy.joined(separator: ","), kind: .text,
                              howToChange: "start haul daemon with --no-proxy"),
            "continue": .init(value: "false", kind: .text, howToChange:
                "Haul always resumes its own partial downloads, and never appends to a file it did not start"),
        ]
        if let kept = configuration.retention.maxFinished {
            options["max-download-result"] = .init(value: String(kept), kind: .whole,
                                                   howToChange: "start haul daemon with --max-download-result",
                                                   perDownload: false)
        }
        return options
    }

    /// Whole seconds, rounded up (so that no timeout above 0 lists as 0), as aria2 prints them.
    static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        return String(fraction > 0 ? whole + 1 : whole)
    }

    /// A proxy as aria2 lists it, without its credentials: the daemon's password is never sent
    /// back to a client (aria2 lists it; Haul leaves it out).
    static func proxyOption(_ proxy: ProxySettings.Proxy?, _ flag: String) -> Aria2SettledOption {
        // `socks5h://host:port/` for a SOCKS proxy: aria2 itself has none, but a front-end
        // that sends the value back must get the same proxy, not an http one on that port.
        let listed = proxy.map { "\($0)/" }
        return .init(value: listed ?? "", kind: .proxy(proxy), howToChange: "start haul daemon with \(flag)")
    }
}
