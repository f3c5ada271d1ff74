import HTTPTypes
import Hummingbird

/// Small non-file responses: errors, redirects, control acknowledgements.
///
/// Every non-2xx the server sends has a short `text/plain` body, so that a client that wrongly
/// saves error bodies into the destination file is caught by a content check.
enum PlainResponse {
    /// `status` with `text` as a `text/plain` body (no body for statuses that must not have one).
    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        guard status.code != 204, status.code != 304 else {
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A redirect with `location` sent byte for byte (hostile targets included).
    static func redirect(_ status: HTTPResponse.Status, location: some Collection<UInt8>) -> Response {
        var response = self.text(status, "redirect \(status.code)")
        response.headers.append(HTTPField(name: .location, lenientValue: location))
        return response
    }
}

extension Request {
    /// This request as `RecordedRequest`, with status 0 until the server decides.
    func recorded() -> RecordedRequest {
        RecordedRequest(
            method: self.method.rawValue,
            path: self.uri.path,
            query: self.uri.query ?? "",
            headers: self.headers.map { ($0.name.rawName, $0.value) },
            status: 0
        )
    }
}

extension ServerState {
    /// Admits and records a request whose status is known up front.
    func record(_ request: Request, key: String, status: Int) {
        let admission = self.admit(key: key, request: request.recorded())
        self.setStatus(status, key: key, ordinal: admission.ordinal)
    }
}
