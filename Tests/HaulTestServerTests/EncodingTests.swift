import HaulTestServer
import Testing

@Suite("Transfer and content encodings", .timeLimit(.minutes(2)))
struct EncodingTests {
    /// `chunked=1` sends no Content-Length, uses chunked transfer encoding, and delivers the whole body.
    @Test func chunkedHasUnknownLength() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/c", ["size": "70000", "chunked": "1"]))
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == nil)
            #expect(response.header("Transfer-Encoding")?.lowercased() == "chunked")
            #expect(response.bodyError == nil)
            #expect(response.body.isContent(seed: 0, size: 70_000))
        }
    }

    /// A chunked body that is dropped ends without its last chunk, which the client reports as an error.
    @Test func droppedChunkedBodyIsAnError() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.fetch(server.url("/file/cd", ["size": "70000", "chunked": "1", "drop": "1000"]))
            #expect(response.bodyError != nil)
            #expect(response.body.count == 1000)
        }
    }

    /// `gzip=1` sends a valid gzip stream of the content, sized by its own Content-Length, without ranges.
    @Test func gzipIsValidAndNotRangeable() async throws {
        try await withServerAndClient { server, client in
            for size in [0, 1, 65_535, 150_000] {
                let response = try await client.fetch(
                    server.url("/file/g", ["size": "\(size)", "seed": "4", "gzip": "1"]),
                    headers: [("Range", "bytes=10-")]
                )
                #expect(response.status == 200)
                #expect(response.header("Content-Encoding") == "gzip")
                #expect(response.header("Accept-Ranges") == nil)
                #expect(response.header("Content-Length") == "\(response.body.count)")
                let decoded = try GzipStoredInflater.inflate(response.body)
                #expect(decoded.isContent(seed: 4, size: size), "size \(size)")
            }
        }
    }

    /// `disposition=RAW` reaches the client verbatim: traversal names, RFC 5987 forms, non-ASCII.
    @Test func dispositionIsVerbatim() async throws {
        try await withServerAndClient { server, client in
            let hostile = [
                "attachment; filename=\"../../x\"",
                "attachment; filename*=UTF-8''%2e%2e%2fevil",
                "inline; filename=\"\u{FC}n\u{EF}c\u{F8}d\u{E9} name.bin\"",
                "attachment; filename=\"a\tb\"",
            ]
            for value in hostile {
                let response = try await client.fetch(server.url("/file/disp", ["disposition": value]))
                #expect(response.header("Content-Disposition") == value)
            }
        }
    }

    /// Control characters in `disposition=` go out as raw bytes (only CR, LF and NUL become spaces).
    ///
    /// AsyncHTTPClient's parser rejects such a response outright, so this reads the raw socket.
    @Test func dispositionKeepsControlCharacters() async throws {
        try await withTestServer { server in
            let value = "attachment; filename=\"a\u{01}b\u{1B}[31m\u{7F}.txt\""
            let target = String(server.url("/file/ctl", ["disposition": value]).dropFirst(server.baseURL.count))
            let reply = try await RawHTTP.get(port: server.port, target: target)
            #expect(reply.status == 200)
            #expect(reply.header("content-disposition") == Array(value.utf8))
            let broken = "x\r\nX-Injected: 1"
            let injectionTarget = String(server.url("/file/ctl", ["disposition": broken]).dropFirst(server.baseURL.count))
            let injection = try await RawHTTP.get(port: server.port, target: injectionTarget)
            #expect(injection.header("x-injected") == nil)
        }
    }
}

/// A minimal gzip reader for stored (uncompressed) deflate blocks, with its own CRC-32, so the
/// test checks the server's encoder against an independent implementation.
enum GzipStoredInflater {
    struct Malformed: Error {
        var reason: String
    }

    static func inflate(_ data: [UInt8]) throws -> [UInt8] {
        guard data.count >= 18, data[0] == 0x1F, data[1] == 0x8B, data[2] == 8 else { throw Malformed(reason: "header") }
        guard data[3] == 0 else { throw Malformed(reason: "flags not supported") }
        var index = 10
        var output: [UInt8] = []
        while true {
            guard index + 5 <= data.count else { throw Malformed(reason: "truncated block header") }
            let header = data[index]
            guard header & 0b110 == 0 else { throw Malformed(reason: "not a stored block") }
            let length = Int(data[index + 1]) | Int(data[index + 2]) << 8
            let complement = Int(data[index + 3]) | Int(data[index + 4]) << 8
            guard length == ~complement & 0xFFFF else { throw Malformed(reason: "LEN/NLEN") }
            index += 5
            guard index + length <= data.count else { throw Malformed(reason: "truncated block") }
            output += data[index..<index + length]
            index += length
            if header & 1 == 1 { break }
        }
        guard index + 8 == data.count else { throw Malformed(reason: "trailer") }
        let crc = (0..<4).reduce(UInt32(0)) { $0 | UInt32(data[index + $1]) << (8 * $1) }
        let size = (0..<4).reduce(UInt32(0)) { $0 | UInt32(data[index + 4 + $1]) << (8 * $1) }
        guard crc == self.crc32(output) else { throw Malformed(reason: "CRC") }
        guard size == UInt32(truncatingIfNeeded: output.count) else { throw Malformed(reason: "ISIZE") }
        return output
    }

    /// Bitwise CRC-32 (IEEE), deliberately the slow textbook form.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}
