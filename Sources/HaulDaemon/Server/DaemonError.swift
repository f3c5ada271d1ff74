/// Why the daemon could not start (or had to stop), with a sentence for the person who ran it.
///
/// The kinds are what the command line turns into distinct exit statuses: a script that starts
/// a daemon needs to tell "one is already running" (fine) from "the port is taken" (not fine).
package struct DaemonError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// Another daemon holds the lock of the same state directory or socket.
        case alreadyRunning
        /// A listener could not be set up: the port is taken, the socket path is too long or
        /// unusable, the socket's directory is not safe to use.
        case cannotListen
        /// The state directory or a lock file could not be created or opened.
        case fileSystem
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
