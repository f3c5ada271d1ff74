import Foundation

/// The finishing step of a resource, run once its group completed: checks Metalink pieces and
/// puts those files in place, writes the local playlists, joins segments. Every write is a
/// temporary file renamed over its name, and the inputs are left as they were (except Metalink
/// files, moved to their final names once verified), so running it again after a crash, or
/// twice, gives the same files.
package enum ResourceFinisher {
    /// Runs the finishing step of `plan` in its directory. `fetcher` refetches Metalink pieces
    /// that fail their hash.
    package static func finish(_ plan: ResourcePlan, fetcher: (any DocumentFetching)?) async throws(HaulError) {
        for check in plan.pieceChecks {
            try await PieceVerifier(check: check, directory: plan.directory, fetcher: fetcher).verifyAndPlace()
        }
        for file in plan.localFiles {
            try writeAtomically(Data(file.text.utf8), name: file.name, in: plan.directory)
        }
        for join in plan.joins {
            try SegmentJoiner.join(join, in: plan.directory)
        }
    }

    static func writeAtomically(_ data: Data, name: String, in directory: URL) throws(HaulError) {
        let temporary = directory.appendingPathComponent(".haul-write-\(name).tmp")
        do {
            try data.write(to: temporary)
        } catch {
            throw HaulError(.fileSystem, "cannot write \(temporary.path): \(error.localizedDescription)")
        }
        do {
            try SystemCalls.renameReplacing(from: temporary.path, to: directory.appendingPathComponent(name).path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
