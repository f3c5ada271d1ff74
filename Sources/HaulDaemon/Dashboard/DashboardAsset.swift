import NIOCore

/// One static file of the web dashboard, compiled into the binary: the page needs no build
/// step, no package manager and no other server.
///
/// The files carry no data: everything the page shows comes from JSON-RPC calls that need the
/// secret like any other client's.
struct DashboardAsset: Sendable {
    /// The URL path it is served at (`/` for the page itself).
    let path: String
    /// The `Content-Type` header, with the charset for text.
    let contentType: String
    /// The bytes sent, encoded once.
    let body: ByteBuffer

    init(path: String, contentType: String, text: String) {
        self.path = path
        self.contentType = contentType
        self.body = ByteBuffer(string: text)
    }

    static let html = "text/html; charset=utf-8"
    static let css = "text/css; charset=utf-8"
    static let javaScript = "text/javascript; charset=utf-8"

    /// Every file of the dashboard, one per concern.
    static let all: [DashboardAsset] = [
        DashboardAsset(path: "/", contentType: html, text: DashboardPage.html),
        DashboardAsset(path: "/dashboard/style.css", contentType: css, text: DashboardStyle.css),
        DashboardAsset(path: "/dashboard/format.js", contentType: javaScript, text: DashboardFormatScript.source),
        DashboardAsset(path: "/dashboard/rpc.js", contentType: javaScript, text: DashboardRPCScript.source),
        DashboardAsset(path: "/dashboard/chart.js", contentType: javaScript, text: DashboardChartScript.source),
        DashboardAsset(path: "/dashboard/downloads.js", contentType: javaScript, text: DashboardDownloadsScript.source),
        DashboardAsset(path: "/dashboard/details.js", contentType: javaScript, text: DashboardDetailsScript.source),
        DashboardAsset(path: "/dashboard/add.js", contentType: javaScript, text: DashboardAddScript.source),
        DashboardAsset(path: "/dashboard/sessions.js", contentType: javaScript, text: DashboardSessionsScript.source),
        DashboardAsset(path: "/dashboard/fleet.js", contentType: javaScript, text: DashboardFleetScript.source),
        DashboardAsset(path: "/dashboard/app.js", contentType: javaScript, text: DashboardAppScript.source),
    ]
}
