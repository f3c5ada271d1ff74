import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// One of the daemon's listeners (the unix socket or TCP) running the daemon's router, as a
/// service of its group.
///
/// A listener that cannot start (the port is taken, the path is unusable) fails with
/// `DaemonError.cannotListen` naming the address, which stops the whole daemon: a daemon that
/// is only half reachable would confuse its clients more than one that does not start.
struct RPCListenerService: Service, CustomStringConvertible {
    enum Address: Sendable {
        case unixSocket(SocketLocation)
        case tcp(DaemonConfiguration.TCPListener)
    }

    let address: Address
    let router: RPCRouter
    let configuration: DaemonConfiguration
    let readiness: DaemonReadiness
    let logger: Logger

    var description: String {
        switch address {
        case .unixSocket(let location): "RPC listener on \(location.path)"
        case .tcp(let listener): "RPC listener on \(listener.host):\(listener.port)"
        }
    }

    private var listener: DaemonReadiness.Listener {
        if case .unixSocket = address { return .unixSocket }
        return .tcp
    }

    func run() async throws {
        let readiness = self.readiness
        let address = self.address
        let listener = self.listener
        let bindAddress: BindAddress = switch address {
        case .unixSocket(let location): .unixDomainSocket(path: location.path)
        case .tcp(let tcp): .hostname(tcp.host, port: tcp.port)
        }
        let webSocketResponder = router.responder
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            // An HTTP connection that stays idle this long is closed, so that idle clients
            // cannot pile up connections.
            http1: .init(idleTimeout: Self.timeAmount(configuration.idleTimeout)),
            ws: WebSocketServerConfiguration(maxFrameSize: configuration.maxRequestBytes, closeTimeout: .seconds(5)))
        // TCP is open to every local user, secret or not: its connections are bounded below
        // the open-file limit, so that the unix socket always has descriptors left.
        let admission: ConnectionTable? = switch address {
        case .unixSocket: nil
        case .tcp:
            ConnectionTable(
                total: configuration.tcpConnections.resolvedTotal(openFileLimit: DaemonSystemCalls.openFileLimit()),
                perPeer: configuration.tcpConnections.perPeer)
        }
        let application = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTPChannel(
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder, configuration: channelConfiguration),
                    admission: admission)
            },
            configuration: ApplicationConfiguration(address: bindAddress, serverName: nil),
            onServerRunning: { channel in
                await Self.reportStarted(address: address, channel: channel, readiness: readiness)
            },
            logger: logger)
        do {
            try await application.run()
        } catch {
            if await readiness.hasStarted(listener) { throw error }
            throw await readiness.failure(of: listener) ?? DaemonError(.cannotListen, "cannot listen on \(place): \(Self.explain(error))")
        }
        if let failure = await readiness.failure(of: listener) { throw failure }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Where this listener listens, for messages.
    private var place: String {
        switch address {
        case .unixSocket(let location): "the socket \(location.path)"
        case .tcp(let tcp): "\(tcp.host):\(tcp.port)"
        }
    }

    /// Narrows the socket's mode, learns the port actually bound, and tells the readiness
    /// tracker; a socket that cannot be narrowed closes the listener instead.
    private static func reportStarted(address: Address, channel: any Channel, readiness: DaemonReadiness) async {
        switch address {
        case .unixSocket(let location):
            do {
                let identity = try location.restrictBoundSocket()
                await readiness.unixSocketStarted(identity: identity)
            } catch {
                await readiness.failed(.unixSocket, error)
                try? await channel.close()
            }
        case .tcp(let tcp):
            await readiness.tcpStarted(host: tcp.host, port: channel.localAddress?.port ?? tcp.port)
        }
    }

    /// The reason in an NIO bind error, without the type names around it.
    private static func explain(_ error: any Error) -> String {
        if let error = error as? IOError {
            return DaemonSystemCalls.errorText(error.errnoCode)
        }
        return "\(error)"
    }
}
