import Hummingbird

/// Serves the dashboard's static files on the daemon's router (both listeners).
///
/// Every answer forbids inline scripts, styles and other origins (the page loads its own
/// files and talks to its own daemon over a WebSocket, nothing else), may not be framed, and
/// is not cached, so that a new daemon's page is picked up at once.
enum DashboardRoutes {
    /// The Content-Security-Policy of every dashboard file. `connect-src 'self'` covers the
    /// WebSocket to the same host and port (`ws:`/`wss:` of the page's own origin).
    static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'",
        "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    static func register<Context: RequestContext>(on router: Router<Context>) {
        for asset in DashboardAsset.all {
            router.get(RouterPath(asset.path)) { _, _ in response(for: asset) }
        }
    }

    static func response(for asset: DashboardAsset) -> Response {
        var headers: HTTPFields = [
            .contentType: asset.contentType, .contentSecurityPolicy: contentSecurityPolicy,
            .xContentTypeOptions: "nosniff", .cacheControl: "no-store",
        ]
        headers[HTTPFields.Element.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: asset.body))
    }
}
