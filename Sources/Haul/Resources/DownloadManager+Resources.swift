import Foundation

/// Resources made of shards (an HLS playlist, a Metalink document) as one group: plan, add,
/// finish. Kept as three thin steps over `ResourcePlan`, so that whichever surface adds the
/// group (`haul get`, the daemon, an app) runs the same code, and the finishing step can be
/// run by whoever sees the group complete.
extension DownloadManager {
    /// Reads the document at `source` (an http(s) URL, or a local file for Metalink and HLS
    /// playlists with absolute URIs) and plans it into `directory`. `kind` forces the kind;
    /// otherwise the extension, then the server's content type decides, and a document that is
    /// neither is `.invalidRequest`.
    package func planResource(
        _ source: String, kind: ResourcePlan.Kind? = nil, directory: URL, hls: HLSOptions = HLSOptions()
    ) async throws(HaulError) -> ResourcePlan {
        let directory = URL(fileURLWithPath: directory.standardizedFileURL.path, isDirectory: true)
        let document: FetchedDocument
        let url: URL
        if let parsed = URL(string: source), ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") {
            url = parsed
            document = try await transport.fetchDocument(parsed, headers: hls.headers, limit: hls.limits.maxDocumentBytes)
        } else {
            let path = URL(string: source).flatMap { $0.scheme == "file" ? $0.path : nil } ?? source
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  let size = attributes[.size] as? Int, size <= hls.limits.maxDocumentBytes,
                  let data = FileManager.default.contents(atPath: path)
            else {
                throw HaulError(.invalidRequest, "cannot read '\(source)' as a document of at most \(hls.limits.maxDocumentBytes) bytes")
            }
            url = URL(fileURLWithPath: path)
            document = FetchedDocument(finalURL: url, contentType: nil, body: data)
        }
        guard let kind = kind ?? ResourcePlan.Kind(pathExtensionOf: url.path) ?? ResourcePlan.Kind(mediaType: document.mediaType) else {
            throw HaulError(.invalidRequest, "\(source) is neither an HLS playlist nor a Metalink 4 document (content type \(document.mediaType ?? "none"))")
        }
        // A local playlist's relative URIs resolve to file: URLs, which ResourceURI refuses.
        return try await plan(kind, document, from: url, source: source, directory: directory, hls: hls)
    }

    /// Plans a fetched playlist or Metalink document of `kind` into `directory`.
    private func plan(
        _ kind: ResourcePlan.Kind, _ document: FetchedDocument, from url: URL, source: String, directory: URL, hls: HLSOptions
    ) async throws(HaulError) -> ResourcePlan {
        switch kind {
        case .hls:
            return try await HLSPlanner(fetcher: transport, options: hls).plan(url, into: directory, document: document)
        case .metalink:
            let parsed = try MetalinkParser.parse(document.body, limits: hls.limits)
            return MetalinkPlanner.skippingPlacedFiles(
                try MetalinkPlanner.plan(parsed, source: source, directory: directory, headers: hls.headers, limits: hls.limits))
        }
    }

    /// Adds the plan's downloads as the group `name`, continuing those an earlier run of the
    /// same plan left unfinished (see `add(_:toGroup:continuingExisting:)`).
    package func addResource(_ plan: ResourcePlan, toGroup name: String) async throws(HaulError) -> DownloadGroup {
        try Self.makeDirectories(for: plan.requests)
        return try await add(plan.requests, toGroup: name, continuingExisting: true)
    }

    /// Runs the plan's finishing step (idempotent; see `ResourceFinisher`).
    package func finishResource(_ plan: ResourcePlan) async throws(HaulError) {
        try await ResourceFinisher.finish(plan, fetcher: transport)
    }

    /// Makes the resource's directory and its subdirectories (Metalink names with paths).
    package static func makeDirectories(for requests: [DownloadRequest]) throws(HaulError) {
        var seen: Set<String> = []
        for request in requests where seen.insert(request.directory.path).inserted {
            do {
                try FileManager.default.createDirectory(at: request.directory, withIntermediateDirectories: true)
            } catch {
                throw HaulError(.directoryNotFound, "cannot create the directory \(request.directory.path): \(error.localizedDescription)")
            }
        }
    }
}

extension DownloadManager {
    /// For a URL whose name does not tell: asks the server, and plans it when its content type
    /// is a playlist's or a Metalink document's. Nil when it is anything else, or when the
    /// question fails (unreachable, an error status, a redirect loop: the plain download that
    /// follows meets the same and reports it). The body of anything else is not read (the
    /// connection is dropped), so the plain download costs one extra request, not the file twice.
    package func probeResource(_ source: String, directory: URL, hls: HLSOptions = HLSOptions()) async throws(HaulError) -> ResourcePlan? {
        guard let url = URL(string: source),
              let document = try? await transport.probeDocument(url, headers: hls.headers, limit: hls.limits.maxDocumentBytes),
              let kind = ResourcePlan.Kind(mediaType: document.mediaType)
        else { return nil }
        let directory = URL(fileURLWithPath: directory.standardizedFileURL.path, isDirectory: true)
        return try await plan(kind, document, from: url, source: source, directory: directory, hls: hls)
    }
}
