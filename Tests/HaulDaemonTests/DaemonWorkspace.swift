import Foundation
import HaulTestSupport

/// A fresh directory for a real `haul daemon` and the app that talks to it: the daemon's state
/// directory, its download directory (made here) and its socket, all removed by `remove()`.
struct DaemonWorkspace {
    let directory: TemporaryDirectory
    var root: URL { directory.url }
    var state: URL { directory.file("state") }
    var out: URL { directory.file("out") }
    var socket: String { directory.path("d.sock") }

    init() throws {
        directory = try TemporaryDirectory()
        _ = try directory.subdirectory("out")
    }

    func remove() { directory.remove() }
}
