import AsyncHTTPClient
import Foundation
import NIOCore
import NIOConcurrencyHelpers
import NIOHTTP1

/// `--delegate`: the body written to its file from the event loop, as it arrives, through
/// AsyncHTTPClient's delegate API (no `async` body sequence, no task hop per buffer): a part
/// file created exclusively, written, closed and renamed into place. The floor under a
/// small-file path that writes from the event loop.
final class FileWritingDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Int
    private let name: String
    private var file: FloorPartFile?
    private var count = 0

    init(name: String) { self.name = name }

    func didReceiveHead(task: HTTPClient.Task<Int>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        task.eventLoop.makeCompletedFuture { file = try FloorPartFile(name: name) }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Int>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        task.eventLoop.makeCompletedFuture {
            guard let file else { throw CocoaError(.fileWriteUnknown) }
            count += try file.append(buffer)
        }
    }

    func didFinishRequest(task: HTTPClient.Task<Int>) throws -> Int {
        guard let file else { throw CocoaError(.fileWriteUnknown) }
        try file.finish()
        return count
    }

    func didReceiveError(task: HTTPClient.Task<Int>, _ error: any Error) {
        file?.abandon()
    }
}

/// `--chain`: the same delegate, with no task per file: each request's completion (on the event
/// loop) sends the next one of its worker. The floor under a small-file path that keeps
/// per-file work off Swift's cooperative pool entirely.
enum ChainedFetch {
    static func run(_ urls: [String], concurrency: Int, client: HTTPClient) async throws -> Int {
        // Built before the first is sent, so that sending one cannot fail outside the count below.
        let requests = try urls.map { try HTTPClient.Request(url: $0) }
        let state = NIOLockedValueBox((next: concurrency, left: urls.count, total: 0, failure: (any Error)?.none))
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            @Sendable func start(_ index: Int) {
                let delegate = FileWritingDelegate(name: FloorPartFile.name(of: urls[index]))
                client.execute(request: requests[index], delegate: delegate).futureResult.whenComplete { result in
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
