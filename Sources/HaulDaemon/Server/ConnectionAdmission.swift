import NIOConcurrencyHelpers
import NIOCore

/// How many TCP connections the daemon keeps open, in all and from one peer address.
///
/// Anyone on the machine can open TCP connections to the daemon without knowing its secret.
/// Left unbounded, a thousand idle ones used up its file descriptors: calls on the unix socket
/// timed out, `addUri` failed, and the accept loop spun on EMFILE. Bounded, and below the
/// open-file limit, the unix socket always has descriptors left; and since a new connection
/// is never refused but makes room by closing the one that has been silent longest (see
/// `ConnectionTable`), a client that connects and sends its request at once is served even
/// while someone holds every slot with idle connections.
package struct ConnectionLimits: Sendable, Hashable {
    /// TCP connections open at once. Default: nil, meaning a quarter of the process's
    /// open-file limit (at least 64, at most 4,096), which leaves the rest for part files,
    /// the store and the unix socket.
    package var total: Int?
    /// TCP connections open at once from one peer address. Default: 1,024. Every local client
    /// is 127.0.0.1, so for them it is the total that counts; with `--rpc-listen-all` it keeps
    /// one remote host from taking every slot.
    package var perPeer: Int

    package init(total: Int? = nil, perPeer: Int = 1024) {
        self.total = total
        self.perPeer = perPeer
    }

    /// The total for a process whose soft open-file limit is `openFileLimit`.
    func resolvedTotal(openFileLimit: UInt64) -> Int {
        if let total { return max(1, total) }
        return Int(min(4096, max(64, openFileLimit / 4)))
    }
}

/// The open TCP connections of one listener and when each last sent a byte; decides which
/// to close when a new one would exceed the limits. Shared by the connections' handlers on
/// every event loop, behind a lock; a choice costs one pass over at most `total` entries, and
/// only when a limit is reached.
final class ConnectionTable: Sendable {
    private struct Entry: Sendable {
        let channel: any Channel
        let peer: String
        var lastHeard: NIODeadline
    }

    private struct State: Sendable {
        var entries: [ObjectIdentifier: Entry] = [:]
        var perPeer: [String: Int] = [:]
    }

    let total: Int
    let perPeer: Int
    private let state = NIOLockedValueBox(State())

    init(total: Int, perPeer: Int) {
        self.total = max(1, total)
        self.perPeer = max(1, perPeer)
    }

    var count: Int { state.withLockedValue { $0.entries.count } }

    /// Records a new connection and returns the connections to close to make room for it:
    /// the one of the same peer silent longest if the peer is at its limit, then the one of
    /// all silent longest if the total is. Never the new one itself.
    func admit(_ channel: any Channel, peer: String, now: NIODeadline = .now()) -> [any Channel] {
        let id = ObjectIdentifier(channel)
        return state.withLockedValue { state in
            var evicted: [any Channel] = []
            if state.perPeer[peer, default: 0] >= perPeer,
               let victim = Self.silentLongest(in: state, where: { $0.peer == peer }) {
                Self.remove(victim, from: &state)
                evicted.append(victim.channel)
            }
            if state.entries.count >= total, let victim = Self.silentLongest(in: state, where: { _ in true }) {
                Self.remove(victim, from: &state)
                evicted.append(victim.channel)
            }
            state.entries[id] = Entry(channel: channel, peer: peer, lastHeard: now)
            state.perPeer[peer, default: 0] += 1
            return evicted
        }
    }

    /// The connection sent bytes.
    func heard(_ channel: any Channel, now: NIODeadline = .now()) {
        let id = ObjectIdentifier(channel)
        state.withLockedValue { $0.entries[id]?.lastHeard = now }
    }

    /// The connection closed.
    func closed(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLockedValue { state in
            guard let entry = state.entries[id] else { return }
            Self.remove(entry, from: &state)
        }
    }

    private static func silentLongest(in state: State, where included: (Entry) -> Bool) -> Entry? {
        var oldest: Entry?
        for entry in state.entries.values where included(entry) {
            if oldest == nil || entry.lastHeard < oldest!.lastHeard { oldest = entry }
        }
        return oldest
    }

    private static func remove(_ entry: Entry, from state: inout State) {
        state.entries[ObjectIdentifier(entry.channel)] = nil
        let left = state.perPeer[entry.peer, default: 1] - 1
        state.perPeer[entry.peer] = left > 0 ? left : nil
    }
}

/// The first handler of every TCP connection: registers it in the listener's table (closing
/// what the table evicts), notes each read, and unregisters it when it closes.
final class ConnectionAdmissionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let table: ConnectionTable

    init(table: ConnectionTable) {
        self.table = table
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let peer = channel.remoteAddress?.ipAddress ?? "unknown"
        for victim in table.admit(channel, peer: peer) {
            victim.close(promise: nil)
        }
        let table = self.table
        channel.closeFuture.whenComplete { _ in table.closed(channel) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        table.heard(context.channel)
        context.fireChannelRead(data)
    }
}
