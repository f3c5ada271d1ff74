import Hummingbird

/// Refuses unix-socket connections from another user.
///
/// The socket's mode (0600, in a 0700 directory) already keeps other users out; this is the
/// second lock on the door for sockets placed elsewhere with `--socket`, and for the moment
/// between creating the socket and narrowing its mode. Root is let in: it can read the state
/// directory anyway. TCP connections carry no credentials; the secret guards them.
struct PeerCredentialsMiddleware: RouterMiddleware {
    typealias Context = RPCRequestContext

    let ownUserID: UInt32

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if context.origin.transport == .unixSocket,
           let peer = await DaemonSystemCalls.peerUserID(of: context.channel),
           !Self.admits(peer: peer, owner: ownUserID) {
            context.logger.warning("refused a unix-socket client of another user", metadata: ["uid": "\(peer)"])
            return RefusalResponse.forbidden(channel: context.channel)
        }
        return try await next(request, context)
    }

    /// Whether a peer running as `peer` may use the daemon of `owner`.
    static func admits(peer: UInt32, owner: UInt32) -> Bool {
        peer == owner || peer == 0
    }
}
