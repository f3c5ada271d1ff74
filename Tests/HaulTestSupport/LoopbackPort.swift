import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loopback ports for servers a test starts as processes (nginx, `haul-test-server`), which
/// need a port number before they run.
public enum LoopbackPort {
    /// A loopback port nothing listens on now (the kernel's pick for a socket bound to port 0).
    public static func free() throws -> Int {
        let fd = streamSocket()
        guard fd >= 0 else { throw ChildProcessError("socket() failed") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw ChildProcessError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A socket listening on a loopback port the kernel picked, and that port: for a test's own
    /// server thread, or (never accepting) a server that takes connections and never answers.
    /// The caller closes the descriptor.
    public static func listening(backlog: Int32 = 16) throws -> (descriptor: Int32, port: Int) {
        let fd = streamSocket()
        guard fd >= 0 else { throw ChildProcessError("socket() failed") }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            close(fd)
            throw ChildProcessError("cannot listen on loopback")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether something accepts connections on loopback `port` now; with `waitUntil`, for a
    /// server a test starts as a process.
    public static func accepts(_ port: Int) -> Bool {
        let fd = streamSocket()
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A TCP socket that no child process inherits, or -1. Tests run side by side and start
    /// processes all the time: a child holding a reserved port's socket kept the port bound
    /// after `ReservedPort.release()`, and the test's server could not bind it ("Address
    /// already in use", seen once in a full run). On Linux the flag is set by `socket` itself:
    /// set afterwards, a process spawned by another test in between inherits the socket.
    static func streamSocket() -> Int32 {
        #if canImport(Glibc)
        return socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return fd
        #endif
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// A loopback port held bound without listening, for a test of a server that is down:
/// connections to it are refused until `release()`, after which the test may start its server
/// there.
///
/// The port is below the kernel's ephemeral range: ports that the kernel hands out (to a server
/// bound to port 0, to `LoopbackPort.free()`, or as the local end of a connection) never
/// include it. A port from `LoopbackPort.free()` was free only when asked: in full test runs
/// another test's server took such a port within seconds and the "dead" URL answered, and a
/// port held bound inside the range made the next bind to port 0 fail.
public final class ReservedPort: @unchecked Sendable {
    public let port: Int
    private let lock = NSLock()
    private var descriptor: Int32?

    /// Binds a socket to a free loopback port below the ephemeral range and keeps it.
    public init() throws {
        let firstEphemeral = Self.firstEphemeralPort()
        let low = max(1024, firstEphemeral / 2)
        for _ in 0..<200 {
            let candidate = Int.random(in: low..<firstEphemeral)
            if let fd = Self.bound(to: candidate) {
                port = candidate
                descriptor = fd
                return
            }
        }
        throw ChildProcessError("no free loopback port below \(firstEphemeral)")
    }

    /// Lets the port go, right before a server of the test starts on it. Idempotent.
    public func release() {
        lock.lock()
        defer { lock.unlock() }
        if let fd = descriptor { close(fd) }
        descriptor = nil
    }

    deinit { release() }

    private static func bound(to port: Int) -> Int32? {
        // Not inherited by the processes a test starts meanwhile (`LoopbackPort.streamSocket`).
        let fd = LoopbackPort.streamSocket()
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The low end of the kernel's ephemeral port range (Linux's default when unknown).
    private static func firstEphemeralPort() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) }
        return low.map { max(2048, $0) } ?? 32768
    }
}
