import Foundation
import Haul

/// One run of `haul watch`: a poller reads the daemon every `interval` and turns what it read
/// into frames; one loop draws them and ends the run on `--until-done`, on a signal, or when
/// the daemon stops answering.
///
/// The poller runs apart from the loop so that Ctrl-C ends the run at once, even during a
/// call the daemon is slow to answer. On a terminal each frame is redrawn in place; on a pipe
/// the first view is printed, then only the lines that stay (a download done, failed or
/// removed) as they happen, and the last view at the end, so that a log gets the picture
/// without escape sequences or a flood of repeated views.
struct WatchRun: Sendable {
    let connection: DaemonConnectionOptions
    let interval: Duration
    let untilDone: Bool

    private enum Input: Sendable {
        case frame(WatchFrame)
        case failed(CommandFailure)
        case signal(Int32)
    }

    /// Prints one frame's block and returns.
    static func once(_ connection: DaemonConnectionOptions) async throws {
        try await ClientRun.perform(connection) { client, _ throws(CommandFailure) in
            var view = WatchView()
            let snapshot = try await WatchPoller(client: client).snapshot(following: view)
            let frame = view.update(snapshot, columns: StandardStream.output.columns)
            StandardStream.output.write(LiveBlock.text(erasing: 0, permanent: [], block: frame.block))
        }
    }

    func run() async -> ExitStatus {
        let (inputs, feed) = AsyncStream<Input>.makeStream()
        let signals = SignalWatcher([SIGINT, SIGTERM]) { feed.yield(.signal($0)) }
        defer { signals.stop() }
        let rpc = RPCClient(endpoint: connection.endpoint, secret: connection.resolvedSecret)
        let poller = Task { [interval, untilDone] in
            let poller = WatchPoller(client: DaemonClient(rpc: rpc))
            var view = WatchView()
            while !Task.isCancelled {
                do throws(CommandFailure) {
                    let snapshot = try await poller.snapshot(following: view)
                    let frame = view.update(snapshot, columns: StandardStream.output.columns)
                    feed.yield(.frame(frame))
                    if untilDone, frame.isIdle { return }
                } catch {
                    feed.yield(.failed(error))
                    return
                }
                try? await Task.sleep(for: interval)
            }
        }

        let terminal = StandardStream.output.isTerminal
        var live = LiveBlock()
        var lastBlock: [String] = []
        var frames = 0
        var status = ExitStatus.success
        loop: for await input in inputs {
            switch input {
            case .frame(let frame):
                if terminal {
                    live.draw(permanent: frame.permanent, block: frame.block)
                } else {
                    StandardStream.output.write(LiveBlock.text(erasing: 0, permanent: frame.permanent, block: frames == 0 ? frame.block : []))
                }
                frames += 1
                lastBlock = frame.block
                if untilDone, frame.isIdle { break loop }
            case .failed(let failure):
                StandardStream.error.writeLine("haul: error: \(failure.message)")
                status = failure.status
                break loop
            case .signal(let number):
                // The ^C the terminal echoed ends the line below the block; start a fresh one.
                if terminal { StandardStream.output.write("\n") }
                status = .stopped(by: number)
                break loop
            }
        }
        poller.cancel()
        await poller.value
        await rpc.shutdown()
        // On a pipe, the last view, unless it was the only one (already printed).
        if !terminal, frames > 1 {
            StandardStream.output.write(LiveBlock.text(erasing: 0, permanent: [], block: lastBlock))
        }
        return status
    }
}
