import Foundation
import Haul
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A client of a daemon on PostgreSQL sees the downloads another daemon of the fleet wrote to
/// the database: `haul.status` by ID and `haul.list`, with the state and durable offset the
/// other daemon checkpointed. (One daemon process: the other daemon's row is written with SQL,
/// holding that daemon's lease for an hour, so this one must not claim it.)
@Suite("Clients see the fleet's downloads", .serialized, .timeLimit(.minutes(5)))
struct FleetViewDaemonTests {
    @Test func aDownloadAnotherDaemonWroteShowsThroughThisOne() async throws {
        let cluster = try await PostgresCluster.shared()
        let store = try await cluster.makeDatabase()
        let database = String(store.split(separator: "/").last!.split(separator: "?").first!)
        let workspace = try DaemonWorkspace()
        defer { workspace.remove() }
        let daemon = try await PostgresDaemonTests.startDaemon(socket: workspace.socket, state: workspace.state, out: workspace.out, store: store)
        let session = try await BackgroundSession(
            identifier: "fleet",
            configuration: BackgroundSession.Configuration(endpoint: .unixSocket(path: workspace.socket), startsDaemon: false, eventPollWait: .seconds(1)))
        let other = DownloadID(rawValue: 0x0123_4567_89AB_CDEF)
        // Closed whatever happens: a session left open traps when it goes.
        let outcome: Result<(DownloadID, DownloadInfo, [DownloadInfo]), any Error>
        do {
            let own = try await session.add(DownloadRequest(url: URL(string: "http://127.0.0.1:9/own.bin")!, directory: workspace.out))
            try await session.pause(own.id)
            // Another daemon's download of the same session, running, checkpointed at 123 of 1,000 bytes.
            _ = try await cluster.psql("""
                INSERT INTO haul.download (id, session, groupName, position, priority, state, url, directory, fileName, headers,
                    checksums, metadata, conflictPolicy, partKey, expectedLength, durableOffset, skipped, verifiedChecksums,
                    attempts, createdAt, updatedAt, leaseOwner, leaseUntil, leaseEpoch)
                SELECT \(Int64(bitPattern: other.rawValue)), session, groupName, position + 1, priority, 'running',
                    'http://127.0.0.1:9/other.bin', directory, 'other.bin', headers, checksums, metadata, conflictPolicy,
                    partKey || '-other', 1000, 123, skipped, verifiedChecksums, 1, createdAt, updatedAt,
                    'another-daemon', now() + interval '1 hour', 1
                FROM haul.download WHERE id = \(Int64(bitPattern: own.id.rawValue))
                """, database: database)
            outcome = .success((own.id, try await session.info(other), try await session.downloads()))
        } catch {
            outcome = .failure(error)
        }
        await session.close()
        daemon.send(SIGTERM)
        #expect(ChildProcess.exitCode(await daemon.waitForExit()) == 0)
        let (own, seen, listed) = try outcome.get()
        #expect(seen.state == .running)
        #expect(seen.progress.completedBytes == 123 && seen.progress.expectedBytes == 1000)
        #expect(seen.request.url.absoluteString == "http://127.0.0.1:9/other.bin")
        #expect(Set(listed.map(\.id)) == [own, other])
    }
}
