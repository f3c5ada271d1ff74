import Foundation

/// Turns a Metalink document into a `ResourcePlan`: one download per file, its URLs as mirrors
/// in priority order (http and https only), its size and hashes as checksums.
///
/// A file with piece hashes is downloaded under a hidden staging name (`.NAME.unverified`)
/// without the whole-file checksum, and the finishing step (`PieceVerifier`) checks every
/// piece, refetches those that fail from the mirrors until one gives the right bytes, checks
/// the whole-file hash, and only then renames it to its name: a file with a bad piece is never
/// placed. A file without piece hashes is verified while streaming, as any download with a
/// checksum.
///
/// Names are relative paths. A name that is absolute, has `..`, `.`, an empty component, a
/// backslash or a control character is refused, so nothing is written outside the directory.
package enum MetalinkPlanner {
    package static func plan(
        _ document: MetalinkDocument, source: String, directory: URL, headers: [HeaderField] = [],
        limits: ResourceLimits = ResourceLimits()
    ) throws(HaulError) -> ResourcePlan {
        var plan = ResourcePlan(kind: .metalink, source: source, directory: directory, requests: [])
        var seen: Set<String> = []
        for file in document.files {
            let components = try safeComponents(file.name)
            guard seen.insert(components.joined(separator: "/").lowercased()).inserted else {
                throw HaulError(.invalidResponse, "the Metalink document names '\(file.name)' twice")
            }
            let urls = file.urlsByPriority.compactMap { raw -> URL? in
                try? ResourceURI.resolve(raw, against: nil, place: "Metalink file '\(file.name)'")
            }
            guard let first = urls.first else {
                throw HaulError(.invalidResponse, "Metalink file '\(file.name)' has no http or https URL")
            }
            var fileDirectory = directory
            for component in components.dropLast() { fileDirectory.appendPathComponent(component, isDirectory: true) }
            let name = components.last!
            var request = DownloadRequest(
                url: first, directory: fileDirectory, fileName: name,
                headers: HTTPTransport.headers(headers, from: URL(string: source) ?? first, to: first),
                checksums: file.hashes, conflictPolicy: .overwrite,
                metadata: [ResourcePlan.metadataKey: source], mirrors: Array(urls.dropFirst()))
            if let pieces = file.pieces, !pieces.hashes.isEmpty {
                if let size = file.size {
                    let expected = size == 0 ? 0 : (size + pieces.length - 1) / pieces.length
                    guard expected == Int64(pieces.hashes.count) else {
                        throw HaulError(.invalidResponse, "Metalink file '\(file.name)': \(pieces.hashes.count) piece hashes for \(size) bytes in pieces of \(pieces.length)")
                    }
                }
                request.fileName = PieceCheck.stagedName(for: name)
                request.checksums = []
                plan.pieceChecks.append(PieceCheck(
                    directory: components.dropLast().joined(separator: "/"), name: name, size: file.size,
                    pieces: pieces, checksums: file.hashes, urls: urls, headers: request.headers))
            }
            plan.requests.append(request)
            if plan.entryName == nil { plan.entryName = components.joined(separator: "/") }
        }
        return plan
    }

    /// The plan without the files an earlier run verified and placed (`PieceVerifier.isAlreadyPlaced`).
    package static func skippingPlacedFiles(_ plan: ResourcePlan) -> ResourcePlan {
        var plan = plan
        for check in plan.pieceChecks where PieceVerifier(check: check, directory: plan.directory, fetcher: nil).isAlreadyPlaced() {
            let folder = check.directory.isEmpty ? plan.directory : plan.directory.appendingPathComponent(check.directory, isDirectory: true)
            plan.requests.removeAll { $0.fileName == PieceCheck.stagedName(for: check.name) && $0.directory.path == folder.path }
            plan.pieceChecks.removeAll { $0 == check }
        }
        return plan
    }

    /// The path components of a Metalink file name, refused unless each is a plain name.
    static func safeComponents(_ name: String) throws(HaulError) -> [String] {
        let components = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let unsafe = name.hasPrefix("/") || name.contains("\\") || components.count > 32 || components.contains { component in
            component.isEmpty || component == "." || component == ".." || component.hasPrefix(".haul-") || component.utf8.count > 240
                || FileNaming.sanitize(component) != component
        }
        guard !unsafe else {
            throw HaulError(.invalidFileName, "Metalink file name '\(name.prefix(200))' could lead outside the directory or is not a plain name; refused")
        }
        return components
    }
}
