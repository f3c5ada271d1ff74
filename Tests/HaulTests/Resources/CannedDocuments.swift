import Foundation
@testable import Haul

/// Documents served from memory by URL, for planning tests without a server.
struct CannedDocuments: DocumentFetching {
    var documents: [String: String]
    var contentType = "application/vnd.apple.mpegurl"

    func fetchDocument(_ url: URL, headers: [HeaderField], limit: Int) async throws(HaulError) -> FetchedDocument {
        guard let text = documents[url.absoluteString] else {
            throw HaulError(.httpStatus, "\(url.absoluteString): 404", httpStatus: 404)
        }
        return FetchedDocument(finalURL: url, contentType: contentType, body: Data(text.utf8))
    }

    func fetchRange(_ url: URL, headers: [HeaderField], range: ByteRange) async throws(HaulError) -> Data {
        throw HaulError(.httpStatus, "no ranges here", httpStatus: 416)
    }

    func plan(_ url: String, options: HLSOptions = HLSOptions()) async throws(HaulError) -> ResourcePlan {
        try await HLSPlanner(fetcher: self, options: options).plan(URL(string: url)!, into: URL(fileURLWithPath: "/tmp/resource", isDirectory: true))
    }
}
