import AsyncHTTPClient
import Foundation
import NIOCore
import NIOConcurrencyHelpers
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#endif

/// `--delegate`: the body written to its file from the event loop, as it arrives, through
/// AsyncHTTPClient's delegate API (no `async` body sequence, no task hop per buffer): a part
/// file created exclusively, written, closed and renamed into place. The floor under a
/// small-file path that writes from the event loop.
final class FileWritingDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Int
    private let name: String
    private var descriptor: Int32 = -1
    private var count = 0

    init(name: String) { self.name = name }

    private var partName: String { ".floor-" + name + ".part" }

    func didReceiveHead(task: HTTPClient.Task<Int>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        descriptor = open(partName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return task.eventLoop.makeFailedFuture(CocoaError(.fileWriteUnknown)) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Int>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let written = buffer.withUnsafeReadableBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == buffer.readableBytes else { return task.eventLoop.makeFailedFuture(CocoaError(.fileWriteUnknown)) }
        count += written
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Int>) throws -> Int {
        close(descriptor)
        guard rename(partName, name) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return count
    }

    func didReceiveError(task: HTTPClient.Task<Int>, _ error: any Error) {
        if descriptor >= 0 { close(descriptor) }
    }
}

/// `--chain`: the same delegate, with no task per file: each request's completion (on the event
/// loop) sends the next one of its worker. The floor under a small-file path that keeps
/// per-file work off Swift's cooperative pool entirely.
enum ChainedFetch {
    static func run(_ urls: [String], concurrency: Int, client: HTTPClient) async throws -> Int {
        let state = NIOLockedValueBox((next: concurrency, left: urls.count, total: 0, failure: (any Error)?.none))
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            @Sendable func start(_ index: Int) {
                let name = String(urls[index].split(separator: "/").last ?? "file")
                let request: HTTPClient.Request
                do { request = try HTTPClient.Request(url: urls[index]) } catch { return continuation.resume(throwing: error) }
                client.execute(request: request, delegate: FileWritingDelegate(name: name)).futureResult.whenComplete { result in
                    let (next, finished) = state.withLockedValue { state -> (Int?, Result<Int, any Error>?) in
                        switch result {
                        case .success(let count): state.total += count
                        case .failure(let error): state.failure = state.failure ?? error
                        }
                        state.left -= 1
                        var next: Int?
                        if state.next < urls.count {
                            next = state.next
                            state.next += 1
                        }
                        guard state.left == 0 else { return (next, nil) }
                        return (next, state.failure.map { .failure($0) } ?? .success(state.total))
                    }
                    if let next { start(next) }
                    if let finished { continuation.resume(with: finished) }
                }
            }
            for index in 0..<min(concurrency, urls.count) { start(index) }
        }
    }
}

/// `--write-posix`: a body read through the `async` API, written as the delegate writes it.
enum PosixFile {
    static func write(_ body: ByteBuffer, as name: String) throws {
        let part = ".floor-" + name + ".part"
        let descriptor = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let written = body.withUnsafeReadableBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == body.readableBytes, rename(part, name) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
