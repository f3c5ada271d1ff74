import Foundation

/// Checks a downloaded Metalink file piece by piece before it gets its name (RFC 5854 §4.2.13):
/// each piece that does not match its hash is fetched again, from each URL in priority order
/// until one gives bytes that match (so a mirror that serves a corrupt piece is passed over),
/// and written over the bad one; then the whole-file hashes are checked, and only then is the
/// staged file renamed to its final name. A piece that no mirror serves correctly fails the
/// file with `.checksumMismatch`, and nothing is placed.
///
/// Run again after a crash, it finds either the staged file (and checks it again) or, once it
/// was renamed, only the final file (done).
struct PieceVerifier {
    let check: PieceCheck
    let directory: URL
    let fetcher: (any DocumentFetching)?

    /// Pieces read at once; also the most a refetched piece may be.
    static let maxPieceBytes: Int64 = 64 << 20

    func verifyAndPlace() async throws(HaulError) {
        let folder = check.directory.isEmpty ? directory : directory.appendingPathComponent(check.directory, isDirectory: true)
        let staged = folder.appendingPathComponent(PieceCheck.stagedName(for: check.name))
        let final = folder.appendingPathComponent(check.name)
        guard FileManager.default.fileExists(atPath: staged.path) else {
            if FileManager.default.fileExists(atPath: final.path) { return }  // verified and placed before
            throw HaulError(.fileSystem, "\(staged.path) is missing: the download of \(check.name) did not complete")
        }
        guard check.pieces.length <= Self.maxPieceBytes else {
            throw HaulError(.invalidResponse, "Metalink pieces of \(check.pieces.length) bytes are larger than \(Self.maxPieceBytes)")
        }
        let handle = try SystemCalls.openForUpdateWithoutFollowing(staged.path)
        defer { try? handle.close() }
        do {
            let length = Int64(try handle.seekToEnd())
            if let size = check.size, size != length {
                throw HaulError(.lengthMismatch, "\(check.name) has \(length) bytes, the Metalink document says \(size)")
            }
            for (index, expected) in check.pieces.hashes.enumerated() {
                let range = ByteRange(length: min(check.pieces.length, length - Int64(index) * check.pieces.length), offset: Int64(index) * check.pieces.length)
                guard range.length > 0 else {
                    throw HaulError(.lengthMismatch, "\(check.name) is shorter than its \(check.pieces.hashes.count) pieces")
                }
                try handle.seek(toOffset: UInt64(range.offset))
                let bytes = try handle.read(upToCount: Int(range.length)) ?? Data()
                guard Self.digest(bytes, check.pieces.algorithm) != expected else { continue }
                let good = try await refetch(range, index: index, expected: expected)
                try handle.seek(toOffset: UInt64(range.offset))
                try handle.write(contentsOf: good)
            }
            try handle.synchronize()
            try verifyWhole(handle, length: length)
        } catch {
            throw error as? HaulError ?? HaulError(.fileSystem, "cannot check \(staged.path): \(error.localizedDescription)")
        }
        try SystemCalls.renameReplacing(from: staged.path, to: final.path)
    }

    /// The piece from the first URL whose bytes match its hash.
    private func refetch(_ range: ByteRange, index: Int, expected: String) async throws(HaulError) -> Data {
        var problems: [String] = []
        if let fetcher {
            for url in check.urls {
                do {
                    let bytes = try await fetcher.fetchRange(url, headers: HTTPTransport.headers(check.headers, from: check.urls[0], to: url), range: range)
                    if Self.digest(bytes, check.pieces.algorithm) == expected { return bytes }
                    problems.append("\(url.absoluteString): wrong bytes")
                } catch {
                    problems.append("\(url.absoluteString): \(error.message)")
                }
            }
        }
        throw HaulError(.checksumMismatch, "piece \(index) of \(check.name) does not match its \(check.pieces.algorithm.rawValue) hash, and no mirror served it right (\(problems.joined(separator: "; ")))")
    }

    private func verifyWhole(_ handle: FileHandle, length: Int64) throws {
        guard !check.checksums.isEmpty else { return }
        var hasher = StreamingHasher(algorithms: Set(check.checksums.map(\.algorithm)))
        try handle.seek(toOffset: 0)
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { hasher.update($0) }
        }
        let actual = hasher.finalize()
        for expected in check.checksums where !actual.contains(expected) {
            throw HaulError(.checksumMismatch, "\(check.name) does not match its \(expected.algorithm.rawValue) hash after its pieces were checked")
        }
    }

    /// Whether the file was verified and placed by an earlier run: its final name exists, no
    /// staged copy does, and every piece and whole-file hash matches. Such a file is not
    /// downloaded again (its staged name would otherwise be missing, and fetched anew).
    func isAlreadyPlaced() -> Bool {
        let folder = check.directory.isEmpty ? directory : directory.appendingPathComponent(check.directory, isDirectory: true)
        let final = folder.appendingPathComponent(check.name)
        guard !FileManager.default.fileExists(atPath: folder.appendingPathComponent(PieceCheck.stagedName(for: check.name)).path),
              let handle = FileHandle(forReadingAtPath: final.path)
        else { return false }
        defer { try? handle.close() }
        do {
            let length = Int64(try handle.seekToEnd())
            if let size = check.size, size != length { return false }
            guard Int64(check.pieces.hashes.count) == (length + check.pieces.length - 1) / check.pieces.length else { return false }
            try handle.seek(toOffset: 0)
            for expected in check.pieces.hashes {
                let bytes = try handle.read(upToCount: Int(min(check.pieces.length, Self.maxPieceBytes))) ?? Data()
                guard Self.digest(bytes, check.pieces.algorithm) == expected else { return false }
            }
            try verifyWhole(handle, length: length)
            return true
        } catch {
            return false
        }
    }

    static func digest(_ bytes: Data, _ algorithm: Checksum.Algorithm) -> String {
        var hasher = StreamingHasher(algorithms: [algorithm])
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize().first?.hex ?? ""
    }
}
