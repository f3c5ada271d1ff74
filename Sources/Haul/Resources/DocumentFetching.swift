import Foundation
import NIOCore

/// A document (playlist, Metalink) as fetched: the URL it finally came from (relative URIs
/// resolve against it), its content type and its bytes.
package struct FetchedDocument: Sendable, Hashable {
    package var finalURL: URL
    package var contentType: String?
    package var body: Data

    package init(finalURL: URL, contentType: String?, body: Data) {
        self.finalURL = finalURL
        self.contentType = contentType
        self.body = body
    }

    /// The media type without parameters, lower case (`application/vnd.apple.mpegurl`).
    package var mediaType: String? {
        contentType.map { $0.split(separator: ";").first.map { $0.trimmingBlanks().lowercased() } ?? "" }
    }
}

/// Fetches small documents whole, within a size limit. The planners use it to read playlists;
/// tests give them canned documents.
package protocol DocumentFetching: Sendable {
    func fetchDocument(_ url: URL, headers: [HeaderField], limit: Int) async throws(HaulError) -> FetchedDocument
    /// Exactly the bytes of `range` of `url` (a 206 answer whose Content-Range starts there).
    func fetchRange(_ url: URL, headers: [HeaderField], range: ByteRange) async throws(HaulError) -> Data
}

extension HTTPTransport: DocumentFetching {
    /// A GET through the manager's own client (its proxy, TLS and redirect rules); a status
    /// other than 200 or a body over `limit` is an error.
    package func fetchDocument(_ url: URL, headers: [HeaderField], limit: Int) async throws(HaulError) -> FetchedDocument {
        try await fetchDocument(url, headers: headers, limit: limit, onlyDocuments: false)!
    }

    /// Like `fetchDocument`, but nil without reading the body when the content type is not a
    /// playlist's or a Metalink document's.
    func probeDocument(_ url: URL, headers: [HeaderField], limit: Int) async throws(HaulError) -> FetchedDocument? {
        try await fetchDocument(url, headers: headers, limit: limit, onlyDocuments: true)
    }

    private func fetchDocument(_ url: URL, headers: [HeaderField], limit: Int, onlyDocuments: Bool) async throws(HaulError) -> FetchedDocument? {
        let response = try await get(url, headers: headers)
        if onlyDocuments {
            let probe = FetchedDocument(finalURL: response.finalURL, contentType: response.header("content-type"), body: Data())
            // Not read: AsyncHTTPClient cancels the request when the body is dropped unread.
            guard ResourcePlan.Kind(mediaType: probe.mediaType) != nil else { return nil }
        }
        guard response.status == 200 else {
            _ = try? await response.body.collect(upTo: 64 * 1024)
            throw HaulError(.httpStatus, "\(url.absoluteString): the server answered \(response.status)", httpStatus: response.status)
        }
        if let length = response.header("content-length").flatMap(Int.init), length > limit {
            throw HaulError(.invalidResponse, "\(url.absoluteString) is \(length) bytes, more than the \(limit) a document may have")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await response.body.collect(upTo: limit)
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw HaulError(.invalidResponse, "\(url.absoluteString) is more than the \(limit) bytes a document may have")
        } catch {
            throw HTTPTransport.map(error, url: url)
        }
        return FetchedDocument(finalURL: response.finalURL, contentType: response.header("content-type"), body: Data(buffer.readableBytesView))
    }
}

extension HTTPTransport {
    package func fetchRange(_ url: URL, headers: [HeaderField], range: ByteRange) async throws(HaulError) -> Data {
        let header = HeaderField(name: "Range", value: "bytes=\(range.offset)-\(range.end - 1)")
        let response = try await get(url, headers: headers + [header])
        guard response.status == 206,
              let contentRange = response.header("content-range").flatMap(ContentRange.init(parsing:)),
              contentRange.start == range.offset, contentRange.end == range.end - 1
        else {
            _ = try? await response.body.collect(upTo: 64 * 1024)
            throw HaulError(.invalidResponse, "\(url.absoluteString) did not answer the range \(range.offset)-\(range.end - 1) (status \(response.status))")
        }
        do {
            let buffer = try await response.body.collect(upTo: Int(range.length))
            guard buffer.readableBytes == Int(range.length) else {
                throw HaulError(.lengthMismatch, "\(url.absoluteString) sent \(buffer.readableBytes) of the \(range.length) bytes asked for")
            }
            return Data(buffer.readableBytesView)
        } catch let error as HaulError {
            throw error
        } catch {
            throw HTTPTransport.map(error, url: url)
        }
    }
}
