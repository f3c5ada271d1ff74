import AsyncHTTPClient
import Foundation
import NIOCore

/// bench/http-floor.sh: the cost of the HTTP client alone on job (b), without Haul.
///
/// Fetches every URL of a list with AsyncHTTPClient at a given concurrency, reading each body
/// and, with `--write`, writing it to a file in the current directory. What this takes is a
/// floor for `haul get` on the same list: Haul adds its store, its state machines and its
/// placement on top. Not a product.
///
/// Usage: haul-http-floor LIST [CONCURRENCY] [--write]
@main
struct HTTPFloor {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard let listPath = arguments.first else {
            FileHandle.standardError.write(Data("usage: haul-http-floor LIST [CONCURRENCY] [--write]\n".utf8))
            exit(2)
        }
        let concurrency = arguments.dropFirst().first.flatMap { Int($0) } ?? 16
        let write = arguments.contains("--write")
        let urls = try String(contentsOfFile: listPath, encoding: .utf8).split(separator: "\n").map(String.init)

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let clock = ContinuousClock()
        let start = clock.now
        let bytes = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var total = 0
                    var index = worker
                    while index < urls.count {
                        let response = try await client.execute(HTTPClientRequest(url: urls[index]), timeout: .seconds(30))
                        var body = try await response.body.collect(upTo: 1 << 24)
                        total += body.readableBytes
                        if write {
                            let name = String(urls[index].split(separator: "/").last ?? "file")
                            let data = Data(body.readBytes(length: body.readableBytes) ?? [])
                            guard FileManager.default.createFile(atPath: name, contents: data) else { throw CocoaError(.fileWriteUnknown) }
                        }
                        index += concurrency
                    }
                    return total
                }
            }
            var sum = 0
            for try await part in group { sum += part }
            return sum
        }
        let elapsed = start.duration(to: clock.now)
        print("\(urls.count) files, \(bytes) bytes, \(elapsed)")
        try await client.shutdown()
    }
}
