import AsyncHTTPClient
import Foundation
import NIOCore

/// bench/http-floor.sh: the cost of the HTTP client alone on job (b), without Haul.
///
/// Fetches every URL of a list with AsyncHTTPClient at a given concurrency, reading each body;
/// with an option, each body is also written to a file in the current directory:
/// - `--write`: with `FileManager`, once the body was read through the `async` API;
/// - `--write-posix`: read the same way, then created exclusively as a part file, written,
///   closed and renamed into place with the system calls (what any downloader must do);
/// - `--delegate`: the same system calls made on the event loop as the body arrives, by a
///   response delegate (`FileWritingDelegate`), a task per worker awaiting each file;
/// - `--delegate --chain`: the delegate again, each request sent from the completion of the
///   one before, with no Swift task at all (`ChainedFetch`);
/// - `--bare-nio`: no HTTP client, SwiftNIO's HTTP/1.1 codec on CONCURRENCY keep-alive
///   connections, writing as the delegate does (`BareNIOFetch`): the client's own cost is the
///   difference.
/// What this takes is a floor for `haul get` on the same list: Haul adds its store, its state
/// machines and its placement on top. Not a product.
///
/// Usage: haul-http-floor LIST [CONCURRENCY] [--write | --write-posix | --delegate [--chain] | --bare-nio]
@main
struct HTTPFloor {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard let listPath = arguments.first else {
            FileHandle.standardError.write(Data("usage: haul-http-floor LIST [CONCURRENCY] [--write | --write-posix | --delegate [--chain] | --bare-nio]\n".utf8))
            exit(2)
        }
        let concurrency = arguments.dropFirst().first.flatMap { Int($0) } ?? 16
        let write = arguments.contains("--write")
        let delegate = arguments.contains("--delegate")
        let posix = arguments.contains("--write-posix")
        let urls = try String(contentsOfFile: listPath, encoding: .utf8).split(separator: "\n").map(String.init)

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
        // As Haul's transport sets it: no tracing span per request.
        configuration.tracing.tracer = nil
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let clock = ContinuousClock()
        let start = clock.now
        let bytes = arguments.contains("--bare-nio")
            ? try await BareNIOFetch.run(urls, concurrency: concurrency)
            : arguments.contains("--chain")
            ? try await ChainedFetch.run(urls, concurrency: concurrency, client: client)
            : try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var total = 0
                    var index = worker
                    while index < urls.count, delegate {
                        let request = try HTTPClient.Request(url: urls[index])
                        let delegate = FileWritingDelegate(name: FloorPartFile.name(of: urls[index]))
                        total += try await client.execute(request: request, delegate: delegate).futureResult.get()
                        index += concurrency
                    }
                    while index < urls.count {
                        let response = try await client.execute(HTTPClientRequest(url: urls[index]), timeout: .seconds(30))
                        var body = try await response.body.collect(upTo: 1 << 24)
                        total += body.readableBytes
                        if posix {
                            // As the delegate writes, once the body is all there.
                            let file = try FloorPartFile(name: FloorPartFile.name(of: urls[index]))
                            do {
                                _ = try file.append(body)
                                try file.finish()
                            } catch {
                                file.abandon()
                                throw error
                            }
                        } else if write {
                            let name = FloorPartFile.name(of: urls[index])
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
