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

    /// Writes `data` under a new random name in `directory` (never through a link), then
    /// renames it over `name`.
    static func writeAtomically(_ data: Data, name: String, in directory: URL) throws(HaulError) {
        let file = try SystemCalls.temporaryFile(in: directory.path)
        do {
            try file.write(data)
        } catch {
            file.discard()
            throw error
        }
        try file.commit(as: name, sync: false)
    }
}
