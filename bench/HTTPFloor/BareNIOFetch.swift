import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// `--bare-nio`: no HTTP client at all, only SwiftNIO's HTTP/1.1 codec: CONCURRENCY keep-alive
/// connections, each sending its next GET when the last response ended, each body written to
/// a part file from the event loop and renamed into place. No pool, no redirects, no retries,
/// no TLS: what an HTTP client's own machinery costs is the difference between this row and
/// AsyncHTTPClient's. Plain `http://host:port/path` URLs of one server only.
enum BareNIOFetch {
    /// The URLs still to fetch, shared by every connection.
    final class Work: Sendable {
        let paths: [String]
        let host: String
        private let next = NIOLockedValueBox(0)

        init(paths: [String], host: String) {
            self.paths = paths
            self.host = host
        }

        func take() -> String? {
            next.withLockedValue { index in
                guard index < paths.count else { return nil }
                defer { index += 1 }
                return paths[index]
            }
        }
    }

    final class FetchHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        private let work: Work
        private let done: EventLoopPromise<Int>
        private var name = ""
        private var file: FloorPartFile?
        private var total = 0

        init(work: Work, done: EventLoopPromise<Int>) {
            self.work = work
            self.done = done
        }

        func channelActive(context: ChannelHandlerContext) {
            sendNext(context: context)
        }

        private func sendNext(context: ChannelHandlerContext) {
            guard let path = work.take() else {
                done.succeed(total)
                context.close(promise: nil)
                return
            }
            name = FloorPartFile.name(of: path)
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
            head.headers.add(name: "Host", value: work.host)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            do {
                switch unwrapInboundIn(data) {
                case .head:
                    file = try FloorPartFile(name: name)
                case .body(let buffer):
                    guard let file else { throw CocoaError(.fileWriteUnknown) }
                    total += try file.append(buffer)
                case .end:
                    guard let file else { throw CocoaError(.fileWriteUnknown) }
                    self.file = nil
                    try file.finish()
                    sendNext(context: context)
                }
            } catch {
                errorCaught(context: context, error: error)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            file?.abandon()
            file = nil
            done.fail(error)
            context.close(promise: nil)
        }
    }

    static func run(_ urls: [String], concurrency: Int) async throws -> Int {
        guard let first = urls.first.flatMap(URL.init(string:)), let host = first.host, let port = first.port else { return 0 }
        let work = Work(paths: urls.compactMap { URL(string: $0)?.path }, host: "\(host):\(port)")
        let group = MultiThreadedEventLoopGroup.singleton
        var results: [EventLoopFuture<Int>] = []
        for _ in 0..<concurrency {
            let loop = group.next()
            let done = loop.makePromise(of: Int.self)
            let bootstrap = ClientBootstrap(group: loop).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(FetchHandler(work: work, done: done))
                }
            }
            bootstrap.connect(host: host, port: port).whenFailure { done.fail($0) }
            results.append(done.futureResult)
        }
        var total = 0
        for result in results { total += try await result.get() }
        return total
    }
}
