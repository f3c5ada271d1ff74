import Foundation
@testable import HaulDaemon
import HaulTestSupport
import NIOCore
import NIOWebSocket
import Testing

/// JSON-RPC over WebSocket on both listeners, notifications, and the bounds that protect the
/// daemon from one bad client.
@Suite(.timeLimit(.minutes(3))) struct ServerWebSocketTests {
    /// Each message goes to the handler and its answer comes back on the same connection, in
    /// order, over the unix socket and over TCP, with the transport's origin.
    @Test func requestsAreAnsweredOnTheirConnection() async throws {
        try await withRunningDaemon { daemon in
            for (target, origin) in [(daemon.socketTarget, "unixSocket"), (daemon.tcpTarget, "tcp")] {
                let socket = try await ServerTestWebSocket.connect(target)
                socket.send("first")
                socket.send("second")
                #expect(try await socket.next() == #"{"echo":"first","origin":"\#(origin)"}"#)
                #expect(try await socket.next() == #"{"echo":"second","origin":"\#(origin)"}"#)
                await socket.close()
            }
        }
    }

    /// A notification reaches every open WebSocket, on both transports.
    @Test func notificationsReachEveryClient() async throws {
        try await withRunningDaemon { daemon in
            let overSocket = try await ServerTestWebSocket.connect(daemon.socketTarget)
            let overTCP = try await ServerTestWebSocket.connect(daemon.tcpTarget)
            try await waitUntil("both clients to be registered") { await daemon.registry.count == 2 }
            await daemon.context.notifications.broadcast(ByteBuffer(string: #"{"method":"aria2.onDownloadStart"}"#))
            #expect(try await overSocket.next() == #"{"method":"aria2.onDownloadStart"}"#)
            #expect(try await overTCP.next() == #"{"method":"aria2.onDownloadStart"}"#)
            await overSocket.close()
            try await waitUntil("the closed client to be forgotten") { await daemon.registry.count == 1 }
            await overTCP.close()
        }
    }

    /// A message longer than the request limit closes that connection with 1009 (message too
    /// big); another client keeps being served.
    @Test func oversizedMessageClosesOnlyThatConnection() async throws {
        try await withRunningDaemon(configure: { $0.maxRequestBytes = 4096 }) { daemon in
            let offender = try await ServerTestWebSocket.connect(daemon.tcpTarget)
            let bystander = try await ServerTestWebSocket.connect(daemon.socketTarget)
            offender.send(String(repeating: "x", count: 8192))
            #expect(try await offender.closed() == .messageTooLarge)
            bystander.send("hello")
            #expect(try await bystander.next() == #"{"echo":"hello","origin":"unixSocket"}"#)
            await bystander.close()
        }
    }

    /// A client that stops reading is disconnected once its backlog is full, while a client
    /// that reads receives every notification.
    @Test func stalledClientIsDisconnectedWithoutHoldingUpOthers() async throws {
        try await withRunningDaemon(configure: { $0.webSocketBacklogLimit = 8 }) { daemon in
            let stalled = try await ServerTestWebSocket.connect(daemon.tcpTarget, reading: false)
            let reader = try await ServerTestWebSocket.connect(daemon.tcpTarget)
            try await waitUntil("both clients to be registered") { await daemon.registry.count == 2 }
            let payload = String(repeating: "n", count: 64 * 1024)
            var sent = 0
            // The stalled client's socket buffers fill up first; then its backlog; then it is
            // dropped. Each broadcast waits for the reader, so the reader never lags.
            while await daemon.registry.count == 2 {
                sent += 1
                try #require(sent <= 2000, "the stalled client was never disconnected")
                await daemon.context.notifications.broadcast(ByteBuffer(string: "\(sent):\(payload)"))
                let received = try await reader.next()
                try #require(received?.hasPrefix("\(sent):") == true)
            }
            // More than the backlog alone: the socket's buffers took their share first.
            #expect(sent > 8)
            await daemon.context.notifications.broadcast(ByteBuffer(string: "after"))
            #expect(try await reader.next() == "after")
            await reader.close()
            await stalled.close()
        }
    }

    /// A GET of another path is not upgraded.
    @Test func otherPathsAreNotUpgraded() async throws {
        try await withRunningDaemon { daemon in
            await #expect(throws: ServerTestWebSocket.Refused.self) {
                _ = try await ServerTestWebSocket.connect(daemon.tcpTarget, path: "/other")
            }
        }
    }
}
