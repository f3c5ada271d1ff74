import HTTPTypes
import Hummingbird

/// Routes requests to the test server's endpoints and records every one of them.
///
/// A hand-written responder instead of Hummingbird's `Router`: the routes are few and fixed,
/// `/file/<anything>` must match any depth, and HEAD must be answered (and counted) exactly like
/// GET without the router's implicit HEAD-from-GET. Requests are recorded under their `key=`
/// query value, else their path, so tests can see redirect hops and retries alike.
struct TestServerResponder: HTTPResponder {
    typealias Context = TestServerRequestContext

    let state: ServerState
    private let file: FileEndpoint

    init(state: ServerState) {
        self.state = state
        self.file = FileEndpoint(state: state)
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        let query = QueryParameters(request.uri.query)
        let isRead = request.method == .get || request.method == .head

        if path == "/file" || path.hasPrefix("/file/") {
            guard isRead else { return self.recorded(request, query, PlainResponse.text(.methodNotAllowed, "GET or HEAD")) }
            return self.file.respond(to: request, context: context)
        }

        let response: Response
        switch path {
        case "/redirect" where isRead:
            response = RedirectEndpoints.redirect(request, query: query)
        case "/loop" where isRead:
            response = RedirectEndpoints.loop(request)
        case "/redirect-to" where isRead:
            response = RedirectEndpoints.redirectTo(request, query: query)
        case "/live" where isRead:
            // Each request for the key is the next reload: its ordinal is how far the playlist grew.
            let key = query["key"] ?? path
            let admission = self.state.admit(key: key, request: request.recorded())
            let live = LivePlaylistEndpoint.respond(request, query: query, ordinal: admission.ordinal)
            self.state.setStatus(Int(live.status.code), key: key, ordinal: admission.ordinal)
            return live
        case "/control/change":
            // `POST /control/change?key=K`: bumps K's content version, so shell tests can script changes.
            return self.control(request, query: query) { self.state.changeContent(forKey: $0) }
        case "/control/release":
            // `POST /control/release?key=K`: lets K's bodies held by `hold=` go on, as
            // `TestServer.release(key:)` does, for tests in other processes.
            return self.control(request, query: query) { self.state.release(key: $0) }
        case _ where path.hasPrefix("/status/"):
            response = Self.status(path.dropFirst("/status/".count), query: query)
        case "/redirect", "/loop", "/redirect-to":
            response = PlainResponse.text(.methodNotAllowed, "GET or HEAD")
        default:
            response = PlainResponse.text(.notFound, "error 404")
        }
        return self.recorded(request, query, response)
    }

    /// A control request: a `POST` naming a `key`, acted on and answered with 204. It is
    /// recorded under its own path, because the POST is not a request *for* the file.
    private func control(_ request: Request, query: QueryParameters, _ act: (String) -> Void) -> Response {
        let response: Response
        if request.method != .post {
            response = PlainResponse.text(.methodNotAllowed, "POST")
        } else if let key = query["key"], !key.isEmpty {
            act(key)
            response = PlainResponse.text(.noContent, "")
        } else {
            response = PlainResponse.text(.badRequest, "missing key")
        }
        self.state.record(request, key: request.uri.path, status: response.status.code)
        return response
    }

    /// `/status/<code>`: that status with a short body (and `Retry-After` if `retryAfter=` is set).
    private static func status(_ codeText: Substring, query: QueryParameters) -> Response {
        guard let code = Int(codeText), (200...599).contains(code) else {
            return PlainResponse.text(.badRequest, "invalid status")
        }
        var response = PlainResponse.text(.init(code: code), "status \(code)")
        if let retryAfter = query["retryAfter"] {
            response.headers[.retryAfter] = retryAfter
        }
        return response
    }

    private func recorded(_ request: Request, _ query: QueryParameters, _ response: Response) -> Response {
        self.state.record(request, key: query["key"] ?? request.uri.path, status: response.status.code)
        return response
    }
}
