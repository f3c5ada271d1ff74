import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A deliberately dumb HTTP/1.1 client over a blocking socket.
///
/// AsyncHTTPClient is the right client for most tests, but it cannot show two things the server
/// promises: exactly how many bytes arrived before a dropped connection (on a connection error it
/// discards body bytes it had buffered but not yet handed over), and header values its parser
/// rejects (control characters). This client sends one request with `Connection: close` and
/// reads raw bytes until the server closes.
///
/// The socket calls block, so they run on a thread of their own: blocking the (two-thread)
/// cooperative pool would starve the server, whose handlers run on that pool too.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Reply {
        /// Status line and header lines, without the blank line.
        var headLines: [String]
        /// Raw header values as bytes, keyed by lowercased name.
        var rawHeaders: [(name: String, value: [UInt8])]
        var body: [UInt8]

        var status: Int? { self.headLines.first.flatMap { Int($0.split(separator: " ")[1]) } }

        func header(_ name: String) -> [UInt8]? {
            self.rawHeaders.first { $0.name == name.lowercased() }?.value
        }
    }

    /// Sends `GET target` to 127.0.0.1:`port` and returns everything until end-of-stream.
    ///
    /// - Parameter slowReader: pause about 1 ms after each read, to play a client slower than
    ///   the server, so that the server's writes queue up in NIO (not a synchronisation device:
    ///   results must not depend on the pause).
    static func get(port: Int, target: String, headers: [(String, String)] = [], slowReader: Bool = false) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result { try self.blockingGet(port: port, target: target, headers: headers, slowReader: slowReader) }
                )
            }
            thread.start()
        }
    }

    private static func blockingGet(port: Int, target: String, headers: [(String, String)], slowReader: Bool) throws -> Reply {
        let fd = try self.openConnection(port: port)
        defer { close(fd) }
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            sent += n
        }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            guard n > 0 else { throw Failure(description: "recv failed: errno \(errno)") }
            data += chunk[0..<n]
            if slowReader { usleep(1000) }
        }
        return try self.parse(data)
    }

    /// Opens a TCP connection to 127.0.0.1:`port`; throws (with errno) if nothing listens there.
    static func openConnection(port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        // A small receive window keeps the server's writes backed up in NIO, which is where a
        // careless connection drop would lose bytes; drop tests must pass under that pressure.
        var receiveBuffer: Int32 = 16_384
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw Failure(description: "connect failed: errno \(error)")
        }
        return fd
    }

    private static func parse(_ data: [UInt8]) throws -> Reply {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = data.indices.first(where: { data[$0...].starts(with: separator) }) else {
            throw Failure(description: "no end of head in \(data.count) bytes")
        }
        let lines = data[..<end].split(separator: 10).map { line in
            line.last == 13 ? Array(line.dropLast()) : Array(line)
        }
        var reply = Reply(headLines: lines.map { String(decoding: $0, as: UTF8.self) }, rawHeaders: [], body: Array(data[(end + 4)...]))
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            var value = line[(colon + 1)...]
            while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            reply.rawHeaders.append((name, Array(value)))
        }
        return reply
    }
}
