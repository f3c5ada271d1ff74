// The child process of CrashRecoveryTests: downloads a batch into a durable store, reporting
// what happens line by line, so that the test can kill it -9 at a moment it chose by reading
// that output, start it again, and finally check that nothing was lost, duplicated or fetched
// far more than once.
//
// Usage: HaulCrashWorker SPEC.json
//
// Every run does the same thing, whatever an earlier, killed run left behind: open the store
// (which continues interrupted downloads), add every group with `continuingExisting: true`
// (which adopts what is already known instead of downloading it again), and wait for every
// group. Standard output, one line per fact, each written with a single write(2) so that a
// kill never leaves half a line:
//
//     opened
//     added GROUP COUNT
//     started ID RESUMED_FROM
//     checkpointed ID DURABLE_OFFSET
//     retrying ID ATTEMPT MESSAGE
//     completed ID PATH
//     failed ID MESSAGE
//     groupCompleted GROUP COMPLETED FAILED CANCELED UNFINISHED
//     done COMPLETED FAILED
//
// Exit status: 0 when every download completed, 1 when any did not, 2 when the spec could not
// be read or the store could not be opened or added to.

import Foundation
import Haul
import HaulTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The batch, as the test writes it.
typealias BatchSpec = CrashBatchSpec

/// Writes one line to standard output at once: unbuffered, because the test acts on each
/// line as it arrives and a killed process cannot flush a buffer.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}

/// Keeps a message on one line, so that the test can split output by lines.
func oneLine(_ text: String) -> String {
    text.replacingOccurrences(of: "\n", with: " ")
}

/// The line for an event, or nil for events the test does not follow (progress, queued…).
func line(for event: ManagerEvent) -> String? {
    switch event {
    case .started(let id, let resumedFrom, _):
        return "started \(id) \(resumedFrom)"
    case .checkpointed(let id, let offset):
        return "checkpointed \(id) \(offset)"
    case .retrying(let id, let attempt, _, let error):
        return "retrying \(id) \(attempt) \(oneLine(error.message))"
    case .completed(let info):
        return "completed \(info.id) \(info.fileURL?.path ?? "-")"
    case .failed(let info):
        return "failed \(info.id) \(oneLine(info.error?.message ?? "unknown error"))"
    case .groupCompleted(let summary):
        return "groupCompleted \(summary.name) \(summary.completed.count) \(summary.failed.count) "
            + "\(summary.canceled.count) \(summary.unfinished.count)"
    default:
        return nil
    }
}

func fail(_ message: String) -> Int32 {
    FileHandle.standardError.write(Data(("HaulCrashWorker: " + oneLine(message) + "\n").utf8))
    return 2
}

func requests(for group: BatchSpec.Group, into directory: URL) throws(HaulError) -> [DownloadRequest] {
    try group.files.map { file throws(HaulError) in
        guard let url = URL(string: file.url) else { throw HaulError(.invalidURL, "bad URL in spec: \(file.url)") }
        return DownloadRequest(
            url: url, directory: directory, fileName: file.name,
            checksums: [try Checksum(.sha256, hex: file.sha256)], priority: file.priority)
    }
}

func run(arguments: [String]) async -> Int32 {
    guard arguments.count == 2 else { return fail("usage: HaulCrashWorker SPEC.json") }
    let spec: BatchSpec
    do {
        spec = try JSONDecoder().decode(BatchSpec.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[1])))
    } catch {
        return fail("cannot read the spec \(arguments[1]): \(error)")
    }
    // Milliseconds of backoff: a retry is not what this test is about, and a slow one would
    // only make a run outlast the test's patience.
    var configuration = DownloadManager.Configuration(
        maxConcurrentDownloads: spec.maxConcurrentDownloads,
        retry: RetryPolicy(maxRetries: 5, baseDelay: .milliseconds(10), maxDelay: .milliseconds(100)),
        progressInterval: .milliseconds(100),
        checkpointBytes: spec.checkpointBytes,
        checkpointInterval: .milliseconds(spec.checkpointIntervalMilliseconds),
        connectTimeout: .seconds(10),
        readTimeout: .seconds(20))
    if let split = spec.split {
        configuration.split = split
        configuration.maxConnectionsPerServer = split
    }
    if let minSegmentSize = spec.minSegmentSize { configuration.minSegmentSize = minSegmentSize }
    let directory = URL(fileURLWithPath: spec.downloadDirectory, isDirectory: true)

    let manager: DownloadManager
    do {
        manager = try await DownloadManager.open(
            stateDirectory: URL(fileURLWithPath: spec.stateDirectory, isDirectory: true), configuration: configuration)
    } catch {
        return fail("cannot open the store: \(error)")
    }
    // Events of downloads the store continued while opening may come before this subscription
    // and go unreported; the test only counts lines, it never needs every one of them.
    let events = manager.managerEvents()
    let reporter = Task {
        for await event in events {
            if let line = line(for: event) { say(line) }
        }
    }
    say("opened")

    var groups: [DownloadGroup] = []
    do {
        for group in spec.groups {
            let added = try await manager.add(requests(for: group, into: directory), toGroup: group.name, continuingExisting: true)
            groups.append(added)
            say("added \(group.name) \(group.files.count)")
        }
    } catch {
        await manager.shutdown()
        await reporter.value
        return fail("cannot add the batch: \(error)")
    }

    var completed = 0
    var failed = 0
    for group in groups {
        guard let summary = try? await manager.groupCompletion(group.name) else { continue }
        completed += summary.completed.count
        failed += summary.count - summary.completed.count
    }
    await manager.shutdown()
    // Shutdown ends the event stream, so every line is out before `done`.
    await reporter.value
    say("done \(completed) \(failed)")
    return failed == 0 ? 0 : 1
}

exit(await run(arguments: CommandLine.arguments))
