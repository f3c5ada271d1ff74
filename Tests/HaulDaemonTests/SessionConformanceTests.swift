import Foundation
import Haul
import HaulTestServer
import HaulTestSupport
import Testing

/// The same scenarios, written once against `DownloadSession`, run through `DownloadManager` (in
/// process) and `BackgroundSession` (in a real `haul daemon`): code written for one behaves the
/// same on the other.
@Suite(.timeLimit(.minutes(5)))
struct SessionConformanceTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case inProcess, background
        var testDescription: String { rawValue }
    }

    /// A fresh session of `kind` (a daemon of its own for the background one), closed after `body`.
    static func withSession<T>(
        _ kind: Kind, _ body: (any DownloadSession, URL) async throws -> T
    ) async throws -> T {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let root = temporary.url
        let out = try temporary.subdirectory("out")
        switch kind {
        case .inProcess:
            var configuration = DownloadManager.Configuration(maxConcurrentDownloads: 4)
            configuration.keepsEventOutbox = true
            let session = try await DownloadManager(identifier: "app", stateDirectory: root.appendingPathComponent("state"), configuration: configuration)
            do {
                let result = try await body(session, out)
                await session.close()
                return result
            } catch {
                await session.close()
                throw error
            }
        case .background:
            let socket = root.appendingPathComponent("d.sock").path
            let daemon = try await BackgroundSessionProcessTests.startDaemon(socket: socket, state: root.appendingPathComponent("state"), out: out)
            defer { daemon.send(SIGKILL) }
            let session = try await BackgroundSession(identifier: "app", configuration: BackgroundSession.Configuration(
                endpoint: .unixSocket(path: socket), settings: SessionSettings(maxConcurrentDownloads: 4),
                startsDaemon: false, eventPollWait: .seconds(2), progressInterval: .milliseconds(100)))
            do {
                let result = try await body(session, out)
                await session.close()
                return result
            } catch {
                await session.close()
                throw error
            }
        }
    }

    static func request(_ server: TestServer, _ name: String, _ query: [String: String] = [:], in directory: URL) -> DownloadRequest {
        DownloadRequest(url: URL(string: server.url("/file/\(name)", query))!, directory: directory)
    }

    /// A batch added as a group yields every member's file as it finishes, and one completion
    /// whose summary lists every file with its bytes.
    @Test(arguments: Kind.allCases) func batchAsAGroup(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let requests = (0..<12).map { n in Self.request(server, "b\(n).bin", ["size": "\(3000 + n)", "seed": "\(n)"], in: out) }
                let group = try await session.add(requests, toGroup: "batch", ifPresent: .addAnew)
                var seen: [DownloadID: DownloadedFile] = [:]
                for try await result in group.results {
                    let file = try #require(result.file, "\(result.id) completed")
                    seen[result.id] = file
                }
                let summary = try await group.completion
                #expect(summary.isComplete && summary.succeeded)
                #expect(summary.results.count == 12)
                #expect(Set(summary.results.map(\.id)) == Set(seen.keys))
                for (n, file) in summary.files.enumerated() {
                    #expect(file.url.lastPathComponent == "b\(n).bin", "in the order added")
                    #expect(FileManager.default.contents(atPath: file.url.path).map(Array.init) == TestContent.bytes(seed: UInt64(n), size: 3000 + n))
                    #expect(file.length == Int64(3000 + n))
                }
                #expect(try await session.group(named: "batch").summary() == summary)
            }
        }
    }

    /// A member that fails is in the summary with its error; its handle throws that error, and
    /// `result` returns it.
    @Test(arguments: Kind.allCases) func failureIsTypedEverywhere(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let group = try await session.add([
                    Self.request(server, "ok.bin", in: out),
                    Self.request(server, "gone.bin", ["status": "410"], in: out),
                ], toGroup: "mixed", ifPresent: .addAnew)
                let summary = try await group.completion
                #expect(summary.completed.count == 1)
                let failed = try #require(summary.failed.first)
                #expect(failed.error?.code == .httpStatus)
                #expect(failed.error?.httpStatus == 410)
                let handle = try await session.download(failed.id)
                await #expect(throws: HaulError.self) { _ = try await handle.value }
                do {
                    _ = try await handle.value
                } catch let error as HaulError {
                    #expect(error.code == .httpStatus && error.httpStatus == 410)
                }
                #expect(try await handle.result.error?.httpStatus == 410)
            }
        }
    }

    /// A paused download keeps its bytes and stays paused; resumed, its handle gives the whole
    /// file.
    @Test(arguments: Kind.allCases) func pauseAndResume(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let size = 400_000
                // Held at half the file until released: the pause always finds it running.
                let query = ["size": "\(size)", "seed": "5", "rate": "200000", "hold": "200000"]
                let download = try await session.add(Self.request(server, "slow.bin", query, in: out))
                try await waitUntil("bytes to arrive") {
                    ((try? await download.info())?.progress.completedBytes ?? 0) > 0
                }
                try await download.pause()
                #expect(try await download.info().state == .paused)
                server.release(key: "/file/slow.bin")
                try await download.resume()
                let file = try await download.value
                #expect(FileManager.default.contents(atPath: file.url.path).map(Array.init) == TestContent.bytes(seed: 5, size: size))
            }
        }
    }

    /// Canceling the task that awaits a download or a group ends the wait with `.waitCanceled`
    /// at once; the download goes on and completes.
    @Test(arguments: Kind.allCases) func cancelingAWaitingTask(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let group = try await session.add(
                    // Held at half the file until the waits ended: it cannot finish before.
                    [Self.request(server, "w.bin", ["size": "300000", "seed": "7", "rate": "150000", "hold": "150000"], in: out)],
                    toGroup: "waited", ifPresent: .addAnew)
                let id = try #require(try await group.downloads().first?.id)
                let download = try await session.download(id)
                let fileWait = Task { try await download.value }
                let groupWait = Task { try await group.completion }
                // Both waits were made before the first bytes arrive; how far they got into
                // their await does not matter: a wait canceled before or during it ends alike.
                try await waitUntil("bytes to arrive") {
                    ((try? await download.info())?.progress.completedBytes ?? 0) > 0
                }
                fileWait.cancel()
                groupWait.cancel()
                let started = ContinuousClock.now
                await #expect(throws: HaulError.self) { _ = try await fileWait.value }
                await #expect(throws: HaulError.self) { _ = try await groupWait.value }
                do { _ = try await fileWait.value } catch let error as HaulError { #expect(error.code == .waitCanceled) }
                #expect(ContinuousClock.now - started < .seconds(10), "the waits ended on cancellation, not with the download")
                #expect(try await download.info().state.isTerminal == false, "the download goes on")
                server.release(key: "/file/w.bin")
                let file = try await download.value
                #expect(FileManager.default.contents(atPath: file.url.path).map(Array.init) == TestContent.bytes(seed: 7, size: 300_000))
            }
        }
    }

    /// A canceled download's handle throws `.canceled`; the group still completes, with the
    /// member canceled.
    @Test(arguments: Kind.allCases) func canceledDownload(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let group = try await session.add(
                    [Self.request(server, "c.bin", ["size": "2000000", "rate": "100000"], in: out), Self.request(server, "d.bin", in: out)],
                    toGroup: "some", ifPresent: .addAnew)
                let slow = try #require(try await group.downloads().first)
                try await session.cancel(slow.id)
                do {
                    _ = try await session.download(slow.id).value
                    Issue.record("a canceled download has no file")
                } catch let error as HaulError {
                    #expect(error.code == .canceled)
                }
                let summary = try await group.completion
                #expect(summary.canceled.map(\.id) == [slow.id])
                #expect(summary.completed.count == 1)
            }
        }
    }

    /// The session's events deliver each download's end and the group's completion with its
    /// summary, each kept one with a sequence; once acknowledged, a new stream does not deliver
    /// them again.
    @Test(arguments: Kind.allCases) func eventsAndAcknowledgement(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let requests = (0..<3).map { n in Self.request(server, "e\(n).bin", ["seed": "\(n)"], in: out) }
                let group = try await session.add(requests, toGroup: "evented", ifPresent: .addAnew)
                _ = try await group.completion
                var finished = Set<DownloadID>()
                var completedGroup: GroupSummary?
                var sawMarker = false
                for try await event in session.events() {
                    switch event.kind {
                    case .finished(let result):
                        #expect(event.sequence != nil)
                        finished.insert(result.id)
                    case .groupCompleted(let summary):
                        completedGroup = summary
                    case .didFinishEvents:
                        sawMarker = true
                    default:
                        break
                    }
                    try await session.acknowledge(event)
                    if sawMarker { break }
                }
                #expect(finished.count == 3)
                #expect(completedGroup?.name == "evented")
                #expect(completedGroup?.files.count == 3)
                // Acknowledged: a new stream starts with the marker.
                for try await event in session.events() {
                    if case .finished = event.kind { Issue.record("an acknowledged event came again") }
                    if case .didFinishEvents = event.kind { break }
                }
            }
        }
    }

    /// Adding the same batch again with `.continue` adds nothing twice: the group's members
    /// are the same downloads, and nothing is fetched again.
    @Test(arguments: Kind.allCases) func addingAgainContinues(kind: Kind) async throws {
        try await withTestServer { server in
            try await Self.withSession(kind) { session, out in
                let requests = (0..<4).map { n in Self.request(server, "again\(n).bin", ["seed": "\(n)", "key": "again"], in: out) }
                let first = try await session.add(requests, toGroup: "again", ifPresent: .continue)
                let before = try await first.completion
                let second = try await session.add(requests, toGroup: "again", ifPresent: .continue)
                let after = try await second.completion
                #expect(Set(after.results.map(\.id)) == Set(before.results.map(\.id)))
                #expect(server.requests(forKey: "again").count == 4)
                #expect(try await session.downloads().count == 4)
            }
        }
    }
}
