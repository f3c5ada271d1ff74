import HTTPTypes
import Hummingbird

/// `/redirect`, `/loop` and `/redirect-to`: the redirect shapes a download client must survive.
///
/// The design requires recording both the original and the final URL and refusing hostile
/// targets, so the server offers chains of a given length and status code, an endless loop, and
/// a raw `Location` of the test's choosing. Hops are absolute URLs built from the request's Host,
/// like most real servers send; `to=` and `location=` are passed through as given.
enum RedirectEndpoints {
    /// Redirect status codes `/redirect?code=` accepts.
    static let codes: Set<Int> = [301, 302, 303, 307, 308]

    /// `GET /redirect?n=N&to=URL&code=302`: N hops in all, the last one to `to`
    /// (default `/file/redirected`). Other query parameters ride along through the chain.
    static func redirect(_ request: Request, query: QueryParameters) -> Response {
        guard let hops = Int(query["n"] ?? "1"), hops >= 0 else {
            return PlainResponse.text(.badRequest, "invalid n")
        }
        guard let code = Int(query["code"] ?? "302"), Self.codes.contains(code) else {
            return PlainResponse.text(.badRequest, "invalid code")
        }
        let origin = Self.origin(of: request)
        if hops <= 1 {
            let target = query["to"] ?? "/file/redirected"
            let location = target.hasPrefix("/") ? origin + target : target
            return PlainResponse.redirect(.init(code: code), location: Array(location.utf8))
        }
        var next = query.all
        next["n"] = String(hops - 1)
        let location = origin + "/redirect?" + QueryParameters.encode(next)
        return PlainResponse.redirect(.init(code: code), location: Array(location.utf8))
    }

    /// `GET /loop`: `302` to itself, forever; the client must give up after its hop limit.
    static func loop(_ request: Request) -> Response {
        PlainResponse.redirect(.found, location: Array((Self.origin(of: request) + "/loop").utf8))
    }

    /// `GET /redirect-to?location=RAW`: `302` with exactly that Location (`ftp://…`, `file:///…`).
    static func redirectTo(_ request: Request, query: QueryParameters) -> Response {
        guard let location = query.bytes("location") else {
            return PlainResponse.text(.badRequest, "missing location")
        }
        return PlainResponse.redirect(.found, location: location)
    }

    /// `http://host:port` as the client addressed us; empty (relative redirects) without a Host.
    private static func origin(of request: Request) -> String {
        request.head.authority.map { "http://\($0)" } ?? ""
    }
}
