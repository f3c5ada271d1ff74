import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Turns what AsyncHTTPClient, SwiftNIO and NIOSSL throw into `HaulError`s whose messages a
/// person can act on: `127.0.0.1:8080: connection refused`, not the nested descriptions of
/// the libraries (`connection reset (error set): Connection refused (errno: 111)`).
///
/// Everything network-shaped is transient (`.connectionFailed`, `.timeout`) and retried; a
/// certificate problem is `.certificate`, and a response that breaks HTTP is the server
/// misbehaving (`ProtocolViolation`), neither of which a retry can fix.
enum TransportFailure {
    static func map(_ error: any Error, url: URL, proxy: ProxySettings.Proxy? = nil) -> HaulError {
        if let haul = error as? HaulError { return haul }
        let place = Self.place(url)
        if error is CancellationError { return HaulError(.canceled, "the transfer of \(url) was stopped") }
        if let proxy, let failure = proxyFailure(error, place: place, proxy: proxy) { return failure }
        if let parserError = error as? HTTPParserError {
            return ProtocolViolation.error(for: parserError, url: url.absoluteString)
                ?? HaulError(.connectionFailed, "\(place): \(parserError)")
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout:
                return HaulError(.timeout, "\(place): no connection within the connect timeout")
            case .tlsHandshakeTimeout:
                return HaulError(.timeout, "\(place): the TLS handshake did not finish in time")
            case .readTimeout, .writeTimeout, .deadlineExceeded:
                return HaulError(.timeout, "\(place): the server did not answer in time")
            case .cancelled:
                return HaulError(.canceled, "the transfer of \(url) was stopped")
            case .invalidURL, .emptyHost, .emptyScheme:
                return HaulError(.invalidURL, "\(url) is not a valid URL")
            case .remoteConnectionClosed:
                return HaulError(.connectionFailed, "\(place): the server closed the connection")
            case .proxyAuthenticationRequired:
                // Not transient: the same credentials get the same answer.
                return HaulError(
                    .httpStatus, "\(place): the proxy wants credentials (407); give them as http://user:password@host:port",
                    httpStatus: 407)
            case .invalidProxyResponse:
                return HaulError(.connectionFailed, "\(place): the proxy refused to open a tunnel (CONNECT) to it")
            default:
                return HaulError(.connectionFailed, "\(place): \(client.shortDescription)")
            }
        }
        if let certificate = certificateProblem(error) {
            return HaulError(.certificate, "\(place): \(certificate)")
        }
        if let reason = networkReason(error) {
            return HaulError(.connectionFailed, "\(place): \(reason)")
        }
        return HaulError(.connectionFailed, "\(place): \(error)")
    }

    /// `host:port`, the part of a URL a network failure is about.
    static func place(_ url: URL) -> String {
        let host = url.host ?? url.absoluteString
        let shown = host.contains(":") ? "[\(host)]" : host
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(shown):\(port)"
    }

    /// A sentence for a failure to connect or a broken connection, or nil if `error` is not one.
    static func networkReason(_ error: any Error) -> String? {
        if let connection = error as? NIOConnectionError {
            if connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return "cannot resolve the host name \(connection.host)"
            }
            // Every address failed; the first one's reason speaks for them (usually the same).
            if let first = connection.connectionErrors.first {
                return networkReason(first.error) ?? "\(first.error)"
            }
            return "cannot connect"
        }
        if let unknown = error as? SocketAddressError.UnknownHost {
            return "cannot resolve the host name \(unknown.host)"
        }
        if let io = error as? IOError {
            return errnoReason(io.errnoCode)
        }
        if let channel = error as? ChannelError {
            switch channel {
            case .connectTimeout: return "no connection within the connect timeout"
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed:
                return "the connection was closed"
            default: return nil
            }
        }
        return nil
    }

    private static func errnoReason(_ code: CInt) -> String {
        switch code {
        case ECONNREFUSED: return "connection refused (nothing listens there, or the server is down)"
        case ECONNRESET: return "connection reset by the server"
        case EPIPE: return "the server closed the connection"
        case ETIMEDOUT: return "connection timed out"
        case EHOSTUNREACH: return "host unreachable"
        case ENETUNREACH: return "network unreachable"
        case ENETDOWN: return "network is down"
        case ECONNABORTED: return "connection aborted"
        default: return String(cString: strerror(code)).lowercased()
        }
    }

    /// A sentence for a TLS failure that is about certificates, or nil if `error` is not one.
    static func certificateProblem(_ error: any Error) -> String? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname || extra == .serverHostnameImpossibleToMatch {
            return "the server's TLS certificate does not name this host"
        }
        guard let ssl = error as? NIOSSLError else { return nil }
        switch ssl {
        case .handshakeFailed(let boring):
            let text = "\(boring)"
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                return "the server's TLS certificate is not trusted (unknown or private CA, self-signed or expired); "
                    + "trust its CA with --ca-certificate FILE"
            }
            if text.contains("CERTIFICATE") || text.contains("ALERT") {
                return "the TLS handshake was refused (\(Self.shortBoringSSL(text)))"
            }
            return nil
        case .noCertificateToValidate, .unableToValidateCertificate:
            return "the server's TLS certificate could not be validated"
        case .failedToLoadCertificate:
            return "the client certificate could not be loaded"
        case .failedToLoadPrivateKey:
            return "the client private key could not be loaded"
        default:
            return nil
        }
    }

    /// The reason names of a BoringSSL error stack, without file names and line numbers.
    private static func shortBoringSSL(_ text: String) -> String {
        let reasons: [String] = text.split(separator: ":").compactMap { part in
            guard part.count > 3, part.allSatisfy({ $0.isUppercase || $0 == "_" || $0.isNumber }) else { return nil }
            return String(part)
        }
        if reasons.isEmpty { return text }
        return reasons.joined(separator: ", ")
    }
}
