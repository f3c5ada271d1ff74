import Foundation
@testable import Haul
import HaulTestServer
import HaulTestSupport
import NIOCore
import Testing

/// A transfer closes its part file, and so releases its lock, before it reports its end: the
/// manager may start the next transfer of the same download at once (a pause and resume, an
/// aria2 `changeOption` that restarts it in its slot, a retry), and that one must find the
/// part file free, however long a copy of the stopped transfer's `PartFile` lingers.
@Suite("Engine: a transfer's end frees its part file", .timeLimit(.minutes(2)))
struct EngineTransferEndTests {
    /// Stopped while its response is still arriving (a slow one), with a copy of its part file
    /// held elsewhere, as a finished task or a thread-pool job of the stopped transfer held one
    /// a few milliseconds after its end: the next transfer of the same part file takes the
    /// lock at once, and the lingering copy can no longer write.
    @Test func stoppedTransferLeavesItsPartFileFree() async throws {
        try await withTestServer { server in
            let temporary = try TemporaryDirectory()
            defer { temporary.remove() }
            let configuration = Support.fastConfiguration()
            let transport = HTTPTransport(configuration: configuration.transport)
            let runner = TransferRunner(transport: transport, configuration: configuration)
            // 4 MB at 64 KB/s: still arriving when it is stopped.
            let request = Support.request(server, "/file/slow.bin", ["size": "4000000", "seed": "9", "rate": "65536"], in: temporary.url)
            var state = TransferState(request: request, partKey: "0123456789abcdef")
            try state.part.openKeepingContents()
            let lingering = state.part
            let live = LiveTransfer()
            let (started, arrived) = AsyncStream.makeStream(of: Void.self)
            let reporter = TransferReporter(started: { _, _ in arrived.yield() }, checkpoint: { _ in })
            let transfer = Task { [state] in
                var state = state
                let result = await runner.run(&state, live: live, reporter: reporter)
                return (result, state)
            }
            for await _ in started { break }
            transfer.cancel()
            let (result, ended) = await transfer.value
            guard case .stopped = result else {
                Issue.record("expected the transfer to stop, it ended with \(result)")
                return
            }
            #expect(!ended.part.isOpen)
            #expect(lingering.handle?.isClosed == true, "the transfer closed its part file for every copy")

            var next = PartFile(directory: temporary.url.path, key: "0123456789abcdef")
            #expect(throws: Never.self, "the next transfer of the download takes the lock at once") {
                try next.openKeepingContents()
            }
            #expect(throws: HaulError.self, "a copy that outlived its transfer writes nothing") {
                try lingering.write(ByteBuffer(bytes: [1, 2, 3]), count: 3, at: 0)
            }
            await transport.shutdown()
        }
    }

    /// A part file another writer holds (another haul process, or another download of this
    /// one) is refused within a moment, with the message that says why; and once it is free,
    /// it is taken. (The moment's wait is for a process being started elsewhere in the test
    /// run: from its fork to its exec it shares the first file, and so its lock.)
    @Test func partFileHeldByAnotherWriterFailsAtOnce() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        var first = PartFile(directory: temporary.url.path, key: "fedcba9876543210")
        try first.openKeepingContents()
        var second = PartFile(directory: temporary.url.path, key: "fedcba9876543210")
        let error = #expect(throws: HaulError.self) { try second.openKeepingContents() }
        #expect(error?.code == .fileExists)
        #expect(error?.message.contains("being written by another download") == true, "\(error?.message ?? "")")
        first.close()
        #expect(throws: Never.self) { try second.openKeepingContents() }
        second.close()
    }
}
