import Foundation

/// The first request of an attempt when a download has mirrors (`DownloadRequest.urls`):
/// asked of its URIs in turn until one answers, and the next attempt starts with the next
/// URI after a failure. A download with one URI sends exactly the request it always did.
///
/// While bytes are kept, only the URI the validator came from (`TransferState.validatorSource`)
/// may say the file changed: another URI's answer that does not prove the same file is left
/// unread, the part file untouched, and the validator's source is asked next.
extension TransferRunner {
    /// Sends the first request to the URI the attempt starts with (`state.sourceIndex`); when
    /// it cannot be reached or answers an error status (other than 416, which resuming needs
    /// to see), to the next, round the list. The last one's answer or error is what the
    /// attempt gets. `extra` are the range headers, asking from `offset`. Sets
    /// `state.sourceIndex` to the URI that answered, and tells `live` where the bytes come from.
    ///
    /// A resume (`offset` > 0) asks the validator's source second, right after the URI the
    /// attempt starts with. An answer from another URI that is not a `206` of the very same
    /// file (`ResumePolicy.provesSameFile`) is dropped unread; when no URI is left to ask,
    /// the attempt fails with the last error (a transient one: the retry policy waits and
    /// asks again) and every kept byte stays. Only when the validator's source is unknown
    /// (after a restart whose final URL is none of the URIs) does the last answer go to
    /// `ResumePolicy.decide`, which judges it strictly.
    func firstResponse(
        _ state: inout TransferState, offset: Int64, adding extra: [HeaderField], live: LiveTransfer
    ) async throws(HaulError) -> HTTPTransport.Response {
        let uris = state.request.urls
        let kept = offset > 0 && !extra.isEmpty ? state.entity : nil
        let order = MirrorSet.order(
            count: uris.count, startingAt: state.sourceIndex, thenAsking: kept == nil ? nil : state.validatorSource)
        var lastError: HaulError?
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
                lastError = error
                continue
            }
            if response.status >= 400, response.status != 416, !isLast {
                // An error body is small and never saved.
                lastError = ResumePolicy.statusError(response.status, header: response.header, url: response.finalURL.absoluteString)
                _ = try? await response.body.collect(upTo: 64 * 1024)
                continue
            }
            if let kept, state.mustProveSameFile(index), response.status < 400 || response.status == 416,
               !ResumePolicy.provesSameFile(requestedOffset: offset, entity: kept, status: response.status, header: response.header) {
                // Another file, or an answer that proves nothing: its body is never read, and
                // the kept bytes are neither appended to nor thrown away on its word.
                if !isLast { continue }
                if state.validatorSource != nil {
                    throw lastError ?? HaulError(
                        .connectionFailed, "\(response.finalURL): does not serve the file of the kept bytes, and no other URI answered")
                }
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
