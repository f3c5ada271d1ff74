import Foundation

/// The first request of an attempt when a download has mirrors (`DownloadRequest.urls`):
/// asked of its URIs in turn until one answers, and the next attempt starts with the next
/// URI after a failure. A download with one URI sends exactly the request it always did.
extension TransferRunner {
    /// Sends the first request to the URI the attempt starts with (`state.sourceIndex`); when
    /// it cannot be reached or answers an error status (other than 416, which resuming needs
    /// to see), to the next, round the list. The last one's answer or error is what the
    /// attempt gets. `extra` are the range headers. Sets `state.sourceIndex` to the URI that
    /// answered, and tells `live` where the bytes come from.
    func firstResponse(
        _ state: inout TransferState, adding extra: [HeaderField], live: LiveTransfer
    ) async throws(HaulError) -> HTTPTransport.Response {
        let uris = state.request.urls
        let order = MirrorSet.order(count: uris.count, startingAt: state.sourceIndex)
        for (attempt, index) in order.enumerated() {
            let isLast = attempt == order.count - 1
            let uri = uris[index]
            let headers = uris.count == 1
                ? state.request.headers : MirrorSet.headers(for: uri, target: uri, request: state.request)
            let response: HTTPTransport.Response
            do {
                response = try await transport.get(uri, headers: headers + extra)
            } catch {
                if isLast || Task.isCancelled { throw error }
                continue
            }
            if response.status >= 400, response.status != 416, !isLast {
                // An error body is small and never saved.
                _ = try? await response.body.collect(upTo: 64 * 1024)
                continue
            }
            state.sourceIndex = index
            let server = DownloadServer(
                uri: uri, currentURL: response.finalURL, bytesPerSecond: nil, connections: 1)
            live.setServers { [server] }
            return response
        }
        preconditionFailure("a download has at least one URI")
    }
}

extension TransferState {
    /// After an attempt failed with `error` (or was stopped by the read timeout): the next one
    /// starts with the next URI when the server or the network failed (and it resumes from
    /// there if that URI has the same file).
    mutating func turnToNextSource(after error: HaulError, timedOut: Bool) {
        guard !request.mirrors.isEmpty else { return }
        let cause = timedOut ? HaulError(.timeout, error.message) : error
        sourceIndex = MirrorSet.next(after: sourceIndex, count: request.urls.count, error: cause)
    }
}
