import HTTPTypes
import Hummingbird
import NIOCore

/// `GET|HEAD /file/<anything>`: deterministic content with scripted faults.
///
/// The order of decisions mirrors what a real origin does, so clients meet faults where they
/// would meet them in the wild: the key's script picks the status first (a `503` carries no
/// validators), then validators, then `If-Range` and `Range`, and only then the body faults,
/// which act on the bytes of whatever response was chosen (a `206` can be dropped too).
struct FileEndpoint: Sendable {
    let state: ServerState

    func respond(to request: Request, context: TestServerRequestContext) -> Response {
        let query = QueryParameters(request.uri.query)
        let options: FileOptions
        do {
            options = try FileOptions(query)
        } catch {
            let response = PlainResponse.text(.badRequest, "invalid \(error.name)=\(error.value)")
            self.state.record(request, key: request.uri.path, status: response.status.code)
            return response
        }
        let key = options.key ?? request.uri.path
        let admission = self.state.admit(key: key, request: request.recorded(), changeAfter: options.changeAfter)
        let response = self.response(to: request, key: key, options: options, admission: admission, channel: context.channel)
        self.state.setStatus(response.status.code, key: key, ordinal: admission.ordinal)
        return response
    }

    private func response(
        to request: Request,
        key: String,
        options: FileOptions,
        admission: ServerState.Admission,
        channel: any Channel
    ) -> Response {
        let scripted = options.status(forOrdinal: admission.ordinal)
        guard (200..<300).contains(scripted) else {
            var response = PlainResponse.text(.init(code: scripted), "error \(scripted)")
            if let retryAfter = options.retryAfter {
                response.headers[.retryAfter] = retryAfter
            }
            return response
        }

        let version = admission.version
        let contentSeed = options.seed &+ UInt64(version)
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        let etagMode = options.etagMode(forVersion: version)
        let etag: String? =
            switch etagMode {
            case .strong: "\"s\(options.seed)-v\(version)-\(options.size)\""
            case .weak: "W/\"s\(options.seed)-v\(version)-\(options.size)\""
            case .none: nil
            }
        headers[.eTag] = etag
        let lastModified = options.lastModified ? HTTPDate.lastModified(version: version) : nil
        headers[.lastModified] = lastModified
        if let disposition = options.disposition {
            // Lenient: hostile names with control characters must reach the client as sent
            // (only CR, LF and NUL, which would break HTTP framing itself, become spaces).
            headers.append(HTTPField(name: .contentDisposition, lenientValue: disposition))
        }

        var status = HTTPResponse.Status.ok
        var source = BodyPlan.Source.content(seed: contentSeed, offset: 0)
        var bodyLength = options.size
        var bodyStart = 0
        if options.gzip {
            headers[.contentEncoding] = "gzip"
            source = .gzip(seed: contentSeed, size: options.size)
            bodyLength = GzipStream.encodedLength(contentSize: options.size)
        } else if options.servesRanges(forOrdinal: admission.ordinal) {
            headers[.acceptRanges] = "bytes"
            var range = RangeRequest(header: request.headers[.range], length: options.size)
            if range != .whole, options.ifRange, let ifRange = request.headers[.ifRange],
                !IfRange.matches(ifRange, etag: etag, weakETag: etagMode == .weak, lastModified: lastModified)
            {
                range = .whole
            }
            switch range {
            case .whole:
                break
            case .partial(let asked):
                let bytes = asked.lowerBound..<min(asked.upperBound, asked.lowerBound + (options.maxRange ?? asked.count))
                status = .partialContent
                headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(options.size)"
                source = .content(seed: contentSeed, offset: bytes.lowerBound)
                bodyLength = bytes.count
                bodyStart = bytes.lowerBound
            case .unsatisfiable:
                var response = PlainResponse.text(.rangeNotSatisfiable, "error 416")
                response.headers[.contentRange] = "bytes */\(options.size)"
                return response
            }
        }

        // Body faults: what is declared, what is sent, and whether the connection is cut after.
        let declared: Int? = options.chunked ? nil : max(0, bodyLength + options.lengthDelta)
        if let declared {
            headers[.contentLength] = String(declared)
        }
        if request.method == .head {
            var response = Response(status: status, headers: headers, body: ResponseBody())
            response.headers[.contentLength] = declared.map(String.init)
            return response
        }
        var sendCount = min(bodyLength, declared ?? bodyLength)
        if options.drops(forOrdinal: admission.ordinal), let drop = options.drop {
            sendCount = min(sendCount, drop)
        }
        var plan = BodyPlan(
            source: source,
            sendCount: sendCount,
            abortsConnection: sendCount < (declared ?? bodyLength),
            stallBeforeClosing: options.stall.map { .seconds($0) },
            rate: options.rate(forBodyStart: bodyStart),
            chunkSize: options.writeChunkSize
        )
        let state = self.state
        if let hold = options.hold, !options.gzip, max(0, hold - bodyStart) < sendCount {
            plan.holdAfter = max(0, hold - bodyStart)
            plan.isReleased = { state.isReleased(key: key) }
        }
        let body = BodyStreamer.body(
            for: plan, channel: channel, streaming: { state.streaming($0, key: key) },
            written: { count in state.addBytesSent(count, key: key) })
        return Response(status: status, headers: headers, body: body)
    }
}
