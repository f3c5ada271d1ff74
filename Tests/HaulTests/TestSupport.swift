import Crypto
import Foundation
import Haul
import HaulTestServer

/// Shared helpers for end-to-end tests: fast configurations, requests, digests.
enum Support {
    /// Retries in milliseconds, frequent progress and small checkpoints, so tests stay fast.
    static func fastConfiguration(
        maxConcurrent: Int = 4, retries: Int = 5, checkpointBytes: Int64 = 64 * 1024
    ) -> DownloadManager.Configuration {
        DownloadManager.Configuration(
            maxConcurrentDownloads: maxConcurrent,
            retry: RetryPolicy(maxRetries: retries, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20)),
            progressInterval: .milliseconds(20),
            checkpointBytes: checkpointBytes,
            checkpointInterval: .milliseconds(100),
            connectTimeout: .seconds(5),
            readTimeout: .seconds(10))
    }

    static func sha256(_ bytes: some Sequence<UInt8>) -> String {
        SHA256.hash(data: Data(bytes)).map { String(format: "%02x", $0) }.joined()
    }

    static func contents(_ url: URL) -> [UInt8]? {
        FileManager.default.contents(atPath: url.path).map { Array($0) }
    }

    /// Names in a directory, sorted.
    static func listing(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// Haul's own part and resume files left in a directory.
    static func leftovers(_ directory: URL) -> [String] {
        listing(directory).filter { $0.hasPrefix(".haul-") }
    }

    static func request(_ server: TestServer, _ path: String, _ query: [String: String] = [:], in directory: URL,
                        name: String? = nil, checksums: [Checksum] = [], policy: ConflictPolicy = .rename) -> DownloadRequest {
        DownloadRequest(url: URL(string: server.url(path, query))!, directory: directory, fileName: name,
                        checksums: checksums, conflictPolicy: policy)
    }

    /// Downloads one request in a fresh manager and returns its final info.
    static func downloadOne(_ request: DownloadRequest, configuration: DownloadManager.Configuration = fastConfiguration()) async throws -> DownloadInfo {
        try await withDownloadManager(configuration: configuration) { manager in
            let id = try await manager.addMembers([request], toGroup: "one")[0]
            return try await manager.finished(id)
        }
    }

    /// `manager`'s downloads as they are now, for the message of a wait that timed out.
    static func downloadStates(_ manager: DownloadManager) async -> String {
        let states = await manager.downloads().map { info in
            "\(info.request.url.lastPathComponent): \(info.state) waiting \(info.isWaitingToRetry) attempts \(info.attempts) "
                + "error \(info.error?.message ?? "none")"
        }
        return "downloads: " + states.joined(separator: "; ")
    }
}

extension Support {
    /// Runs `body`, then shuts `managers` down, also when `body` throws (a failed `#require`,
    /// a wait that timed out): a manager dropped without its shutdown traps on its HTTP
    /// client's check, which ends the whole test process and every test in it.
    static func shuttingDown<T>(_ managers: [DownloadManager], _ body: () async throws -> T) async throws -> T {
        let value: T
        do {
            value = try await body()
        } catch {
            for manager in managers { await manager.shutdown() }
            throw error
        }
        for manager in managers { await manager.shutdown() }
        return value
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
