import Foundation

extension ProxySettings {
    /// One proxy: its kind, where it is, and the credentials it wants, if any.
    public struct Proxy: Sendable, Hashable, CustomStringConvertible {
        /// How Haul talks to the proxy, named by the scheme of its URL.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// An HTTP proxy (`http://`): every origin, http and https, through a `CONNECT` tunnel.
            case http
            /// A SOCKS5 proxy (`socks5://`). curl resolves the host name itself for this
            /// scheme; Haul cannot (AsyncHTTPClient always sends the name), so the proxy
            /// resolves it, exactly as for `socks5h`.
            case socks5
            /// A SOCKS5 proxy that resolves host names (`socks5h://`): the name is sent to the
            /// proxy, no DNS query leaves this machine for a proxied URL.
            case socks5h

            /// Whether this is a SOCKS proxy.
            public var isSOCKS: Bool { self != .http }
        }

        /// HTTP (with `CONNECT`), SOCKS5 or SOCKS5 with names resolved at the proxy.
        public var kind: Kind
        /// The proxy's host name or address.
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// Sent as Basic `Proxy-Authorization` to an http proxy. A SOCKS proxy with credentials
        /// cannot be used (`problem`).
        public var username: String?
        /// The password for `username` (HTTP proxies only).
        public var password: String?

        /// Parses a proxy URL, or nil when `parse` would refuse it.
        public init?(url text: String) {
            guard let proxy = try? Self.parse(text) else { return nil }
            self = proxy
        }

        /// A proxy at `host:port`; credentials for HTTP proxies only.
        public init(host: String, port: Int, username: String? = nil, password: String? = nil, kind: Kind = .http) {
            self.kind = kind
            self.host = host
            self.port = port
            self.username = username
            self.password = password
        }

        /// Parses `SCHEME://[user[:password]@]host[:port]` as curl does: `http`, `socks5` and
        /// `socks5h` schemes; no scheme means http; the port is 1080 when absent; user and
        /// password are percent-decoded. What Haul cannot speak is refused with the reason,
        /// never taken as "no proxy": a proxy that was asked for and silently left out would
        /// send the traffic directly. Refused: SOCKS4 (`socks4`, `socks4a`, and `socks`, which
        /// curl takes as SOCKS4), an `https://` proxy (TLS to the proxy), SOCKS5 with
        /// credentials, any other scheme, and text that is not a URL with a host.
        public static func parse(_ text: String) throws(HaulError) -> Proxy {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw HaulError(.unsupportedProxy, "the proxy URL is empty") }
            let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
            guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased(),
                  let host = components.host, !host.isEmpty
            else { throw HaulError(.unsupportedProxy, "'\(Self.withoutCredentials(trimmed))' is not a proxy URL") }
            guard let kind = Kind(rawValue: scheme) else {
                throw HaulError(.unsupportedProxy, Self.refusal(scheme: scheme, text: Self.withoutCredentials(trimmed)))
            }
            var proxy = Proxy(
                host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host,
                port: components.port ?? 1080,
                username: components.percentEncodedUser.flatMap { $0.removingPercentEncoding },
                password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
                kind: kind)
            if proxy.username?.isEmpty == true && proxy.password == nil { proxy.username = nil }
            if let problem = proxy.problem { throw problem }
            return proxy
        }

        /// Why this proxy cannot be used, or nil when it can.
        public var problem: HaulError? {
            if kind.isSOCKS && (username != nil || password != nil) {
                return HaulError(
                    .unsupportedProxy,
                    "\(self) has a user name and password; Haul's SOCKS support (AsyncHTTPClient's) has no authentication, "
                        + "so a SOCKS proxy must accept clients without it (or use an http:// proxy with credentials)")
            }
            if host.isEmpty || !(1...65535).contains(port) {
                return HaulError(.unsupportedProxy, "\(self) is not a usable proxy address")
            }
            return nil
        }

        /// `socks5h://host:port`, without the credentials (they never appear in messages or listings).
        public var description: String {
            "\(kind.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        }

        private static func refusal(scheme: String, text: String) -> String {
            switch scheme {
            case "socks4", "socks4a", "socks":
                return "\(text): SOCKS4 proxies are not supported (\(scheme == "socks" ? "socks:// means SOCKS4, as in curl; " : "")"
                    + "AsyncHTTPClient speaks only SOCKS5); use socks5h://HOST:PORT if the proxy speaks SOCKS5"
            case "https":
                return "\(text): proxies reached over TLS (https://) are not supported; use http:// or socks5h://"
            default:
                return "\(text): unsupported proxy scheme '\(scheme)'; use http://, socks5:// or socks5h://"
            }
        }

        /// `text` with any `user:password@` taken out, for messages.
        static func withoutCredentials(_ text: String) -> String {
            guard let at = text.lastIndex(of: "@") else { return text }
            let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
            guard start <= at else { return text }
            return String(text[..<start]) + "…@" + String(text[text.index(after: at)...])
        }
    }
}
