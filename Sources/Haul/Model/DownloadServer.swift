import Foundation

/// One URI a running download fetches from in its current attempt (aria2's `getServers`,
/// and `getUris`' `used`).
package struct DownloadServer: Sendable, Hashable {
    /// The URI as the request lists it (`DownloadRequest.urls`).
    package var uri: URL
    /// Where its bytes come from, after redirects (without user info).
    package var currentURL: URL
    /// Its recent speed when known (a split download counts each URI's bytes); nil when only
    /// the download's total speed is (one connection: that is this URI's).
    package var bytesPerSecond: Int64?
    /// Requests to it under way right now; 0 for a URI asked earlier in the attempt and idle
    /// now (between two requests, or given up after failures).
    package var connections: Int

    package init(uri: URL, currentURL: URL, bytesPerSecond: Int64?, connections: Int) {
        self.uri = uri
        self.currentURL = currentURL
        self.bytesPerSecond = bytesPerSecond
        self.connections = connections
    }
}
