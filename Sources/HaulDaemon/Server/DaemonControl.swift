import ServiceLifecycle

/// Lets the parts of a running daemon ask it to stop, as aria2's `shutdown` and
/// `forceShutdown` methods do.
///
/// A request starts the same graceful shutdown as SIGTERM: the servers stop accepting and
/// finish what they are answering, then the shutdown hook checkpoints the sessions. It returns
/// at once, so the method that asked can still send its answer. Asking twice is harmless; a
/// request made before the daemon is running stops it as soon as it starts.
package struct DaemonControl: Sendable {
    private let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    package init() {
        (requests, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts a graceful shutdown of the daemon.
    package func requestShutdown() {
        continuation.yield()
    }

    /// The service that ends (and so shuts the group down) when a shutdown is requested.
    var shutdownRequestService: some Service { ShutdownRequestService(requests: requests) }
}

/// Returns once a shutdown is requested, or when the group shuts down for another reason.
private struct ShutdownRequestService: Service, CustomStringConvertible {
    let requests: AsyncStream<Void>

    func run() async {
        let requests = self.requests
        await cancelWhenGracefulShutdown {
            for await _ in requests { return }
        }
    }

    var description: String { "ShutdownRequests" }
}
