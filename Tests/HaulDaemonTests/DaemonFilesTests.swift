import Foundation
import Haul
@testable import HaulDaemon
import HaulTestSupport
import NIOCore
import NIOPosix
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the socket lives and who may reach it: paths, modes, ownership.
@Suite(.timeLimit(.minutes(3))) struct DaemonFilesTests {
    private static func mode(_ path: String) throws -> UInt32 {
        try #require(try DaemonSystemCalls.status(of: path)).permissions
    }

    /// The default socket is in `$XDG_RUNTIME_DIR/haul`, else in `/tmp/haul-UID`; a relative
    /// runtime directory is ignored, as the XDG spec says.
    @Test func defaultSocketPath() {
        #expect(DaemonEndpoint.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], userID: 1000)
            == "/run/user/1000/haul/haul.sock")
        #expect(DaemonEndpoint.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7/"], userID: 7)
            == "/run/user/7/haul/haul.sock")
        #expect(DaemonEndpoint.defaultSocketPath(environment: [:], userID: 1000) == "/tmp/haul-1000/haul.sock")
        #expect(DaemonEndpoint.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "run"], userID: 5) == "/tmp/haul-5/haul.sock")
    }

    /// A running daemon's socket has mode 0600 and the directory it created for it 0700.
    @Test func socketAndDirectoryModes() async throws {
        try await withRunningDaemon { daemon in
            let socket = daemon.addresses.socketPath
            let status = try #require(try DaemonSystemCalls.status(of: socket))
            #expect(status.type == .socket)
            #expect(status.permissions == 0o600)
            let directoryMode = try Self.mode((socket as NSString).deletingLastPathComponent)
            #expect(directoryMode == 0o700)
            let stateMode = try Self.mode(daemon.directory.path("state"))
            #expect(stateMode == 0o700)
        }
    }

    /// The runtime directory is created 0700, and an existing one of ours with a wider mode is
    /// narrowed to 0700.
    @Test func runtimeDirectoryIsPrivate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fresh = SocketLocation(path: directory.path("fresh/haul.sock"))
        try fresh.prepare(isDefaultRuntimeDirectory: true)
        #expect(try Self.mode(fresh.directory) == 0o700)

        let wide = SocketLocation(path: directory.path("wide/haul.sock"))
        try FileManager.default.createDirectory(atPath: wide.directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try wide.prepare(isDefaultRuntimeDirectory: true)
        #expect(try Self.mode(wide.directory) == 0o700)
    }

    /// A symlink where the runtime directory should be is refused, not followed.
    @Test func runtimeDirectorySymlinkIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path("elsewhere"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: directory.path("link"), withDestinationPath: directory.path("elsewhere"))
        let location = SocketLocation(path: directory.path("link/haul.sock"))
        #expect {
            try location.prepare(isDefaultRuntimeDirectory: true)
        } throws: { error in
            (error as? DaemonError)?.kind == .cannotListen && "\(error)".contains("not a directory")
        }
    }

    /// A runtime directory owned by another user is refused (checked when the tests run as
    /// root, the only user that can make one).
    @Test(.enabled(if: getuid() == 0)) func runtimeDirectoryOfAnotherUserIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let location = SocketLocation(path: directory.path("theirs/haul.sock"))
        try FileManager.default.createDirectory(atPath: location.directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(chown(location.directory, 65534, 65534) == 0)
        #expect {
            try location.prepare(isDefaultRuntimeDirectory: true)
        } throws: { error in
            (error as? DaemonError)?.kind == .cannotListen && "\(error)".contains("belongs to user 65534")
        }
    }

    /// A socket path too long for a unix socket address is refused with a clear message.
    @Test func overlongSocketPathIsRefused() {
        let location = SocketLocation(path: "/tmp/" + String(repeating: "s", count: 120) + "/haul.sock")
        #expect {
            try location.prepare(isDefaultRuntimeDirectory: false)
        } throws: { error in
            (error as? DaemonError)?.kind == .cannotListen && "\(error)".contains("too long")
        }
    }

    /// A file that is not a socket at the socket's path is not removed; the daemon refuses to
    /// start instead.
    @Test func regularFileAtSocketPathIsKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socketPath = directory.path("haul.sock")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: socketPath))
        let daemon = Daemon(
            configuration: DaemonConfiguration(
                socketPath: socketPath, stateDirectory: URL(fileURLWithPath: directory.path("state")),
                tcp: nil, handlesTerminationSignals: false),
            makeHandler: { _ in RecordingHandler() })
        await #expect {
            try await daemon.run()
        } throws: { error in
            (error as? DaemonError)?.kind == .cannotListen && "\(error)".contains("is not a socket")
        }
        #expect(FileManager.default.contents(atPath: socketPath) == Data("precious".utf8))
    }

    /// Only the daemon's own user (and root) may use a unix-socket connection.
    @Test func peerPolicy() {
        #expect(PeerCredentialsMiddleware.admits(peer: 1000, owner: 1000))
        #expect(PeerCredentialsMiddleware.admits(peer: 0, owner: 1000))
        #expect(!PeerCredentialsMiddleware.admits(peer: 1001, owner: 1000))
    }

    /// The user ID of a unix-socket peer is read from the kernel: a connection made by this
    /// process is this user's.
    @Test(.enabled(if: isLinux)) func peerCredentialsAreRead() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("peer.sock")
        let (accepted, acceptedContinuation) = AsyncStream.makeStream(of: UInt32?.self)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                let promise = channel.eventLoop.makePromise(of: Void.self)
                promise.completeWithTask {
                    acceptedContinuation.yield(await DaemonSystemCalls.peerUserID(of: channel))
                }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(unixDomainSocketPath: path).get()
        let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: path).get()
        let peer = try await withTimeLimit("the peer's credentials") {
            var iterator = accepted.makeAsyncIterator()
            return await iterator.next() ?? nil
        }
        #expect(peer == UInt32(getuid()))
        try await client.close()
        try await server.close()
    }
}

#if os(Linux)
private let isLinux = true
#else
private let isLinux = false
#endif
