import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSOCKS

extension TransportFailure {
    /// The error for a request that went through `proxy`, when the failure is the proxy's:
    /// the proxy cannot be reached (transient, like a server that is down: retried, waited
    /// for), a SOCKS proxy could not reach the origin (transient), or the proxy cannot be used
    /// at all (it wants SOCKS credentials, or does not speak SOCKS5: not transient). Nil when
    /// the failure is not about the proxy, to be mapped as for a direct connection.
    static func proxyFailure(_ error: any Error, place: String, proxy: ProxySettings.Proxy) -> HaulError? {
        if let reply = error as? SOCKSError.ConnectionFailed {
            return HaulError(.connectionFailed, "\(place): the SOCKS proxy \(proxy) could not connect to it (\(socksReason(reply.reply)))")
        }
        if let selection = error as? SOCKSError.InvalidAuthenticationSelection {
            let wants = selection.selection == .usernamePassword ? "a user name and password" : "an authentication method"
            return HaulError(
                .unsupportedProxy,
                "\(place): the SOCKS proxy \(proxy) wants \(wants), which Haul cannot give "
                    + "(AsyncHTTPClient's SOCKS client has no authentication)")
        }
        if error is SOCKSError.InvalidProtocolVersion || error is SOCKSError.InvalidReservedByte
            || error is SOCKSError.InvalidAddressType || error is SOCKSError.UnexpectedRead
            || error is SOCKSError.NoValidAuthenticationMethod {
            return HaulError(.unsupportedProxy, "\(place): \(proxy) does not answer as a SOCKS5 proxy")
        }
        if let client = error as? HTTPClientError, client == .socksHandshakeTimeout {
            return HaulError(.timeout, "\(place): the SOCKS proxy \(proxy) did not finish its handshake in time")
        }
        // Connecting is to the proxy, not to the origin: say so, or "127.0.0.1:8080:
        // connection refused" would blame a server that was never tried.
        if error is NIOConnectionError || isConnectRefusal(error) {
            let reason = networkReason(error) ?? "\(error)"
            return HaulError(.connectionFailed, "\(place): cannot reach the proxy \(proxy): \(reason)")
        }
        if let client = error as? HTTPClientError, client == .connectTimeout {
            return HaulError(.timeout, "\(place): no connection to the proxy \(proxy) within the connect timeout")
        }
        return nil
    }

    /// An error that can only come from opening a connection (to the proxy, when there is one).
    private static func isConnectRefusal(_ error: any Error) -> Bool {
        guard let io = error as? IOError else { return false }
        return [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ENETDOWN].contains(io.errnoCode)
    }

    /// The reply of a SOCKS5 server that did not connect, in words (RFC 1928, section 6).
    static func socksReason(_ reply: SOCKSServerReply) -> String {
        switch reply {
        case .serverFailure: return "general failure"
        case .notAllowed: return "not allowed by the proxy's rules"
        case .networkUnreachable: return "network unreachable"
        case .hostUnreachable: return "host unreachable or its name cannot be resolved"
        case .refused: return "connection refused"
        case .ttlExpired: return "TTL expired"
        case .commandUnsupported: return "command not supported"
        case .addressUnsupported: return "address type not supported"
        default: return "reply \(reply.value)"
        }
    }
}
