import AsyncHTTPClient
import Foundation

/// One range request of a segmented transfer's connection, and what its answer means for the
/// source it went to (`MirrorSet`): used, failed (the source waits), or dropped (another file).
extension SegmentJob {
    /// What a range request brought: a body to write, or the end of this connection's request.
    enum Answer {
        case body(HTTPClientResponse.Body)
        /// `failover`: another URI may be asked instead (see `Run.failover`).
        case end(ConnectionEnd, failover: Bool)
    }

    /// Sends the range request for `assignment` to the ticket's source of the mirror set (0 is
    /// the reference, `url`) and judges the answer.
    /// A source that must prove the same file (any but the validator's source, `MirrorSet.authority`)
    /// and does not is dropped, never written from; the authority's answer decides for the
    /// whole transfer, as a download with one URI always did.
    func request(_ assignment: SegmentPlan.Assignment, ticket: MirrorSet.Ticket) async -> Answer {
        let source = ticket.source
        let (target, sourceHeaders, strict) = shared.withLockedValue {
            ($0.mirrors.sources[source].target, $0.mirrors.sources[source].headers, $0.mirrors.mustProveSameFile(source))
        }
        let response: HTTPTransport.Response
        do {
            response = try await transfer.transport.get(
                target, headers: sourceHeaders + ResumePolicy.rangeHeaders(from: assignment.from, to: assignment.to, validator: validator))
        } catch {
            return .end(.failed(error), failover: !Task.isCancelled && shared.withLockedValue {
                $0.mirrors.failed(source, error, serial: ticket.serial)
            })
        }
        let verdict = ResumePolicy.judgeSegment(
            requestedStart: assignment.from, entity: entity, status: response.status, header: response.header,
            url: response.finalURL.absoluteString, strict: strict)
        switch verdict {
        case .use:
            return .body(response.body)
        case .failed(let error):
            // An error body is small and never saved; reading it lets the connection be reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return .end(.failed(error), failover: shared.withLockedValue { $0.mirrors.failed(source, error, serial: ticket.serial) })
        case .fileChanged(let reason), .rangesUnusable(let reason):
            guard !strict else {
                // A mirror holding another file, or one that cannot serve ranges: its body is
                // not read, and it is not asked again in this attempt.
                let failover = shared.withLockedValue { $0.mirrors.drop(source, reason: reason) }
                return .end(.failed(HaulError(.invalidResponse, "\(reason); that mirror is left out")), failover: failover)
            }
            if case .fileChanged = verdict { return .end(.changeCourse(.fileChanged(reason: reason)), failover: false) }
            return .end(.changeCourse(.rangesUnusable(reason: reason)), failover: false)
        }
    }
}
