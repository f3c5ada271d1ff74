import Foundation

/// Where a session's store lives: a SQLite file in a state directory (the embedded default,
/// nothing to install), or a PostgreSQL database (`haul daemon --store postgresql://…`).
package enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// `haul.sqlite` in this directory (created 0700 if needed).
    case directory(URL)
    /// A PostgreSQL database. `stateDirectory` is where the files kept beside the store on this
    /// machine go (the book of owed resource steps), nil for none.
    case postgresql(PostgresAddress, stateDirectory: URL?)

    /// What a person typed for `--store`: a `postgresql://` (or `postgres://`) URL, else the
    /// path of a state directory. Throws `.invalidURL` for a PostgreSQL URL that cannot be used.
    package init(parsing text: String, stateDirectory: URL?) throws(HaulError) {
        if PostgresAddress.isPostgresURL(text) {
            self = .postgresql(try PostgresAddress(parsing: text), stateDirectory: stateDirectory)
        } else {
            self = .directory(URL(fileURLWithPath: text, isDirectory: true))
        }
    }

    /// The location without secrets, for messages and logs.
    package var description: String {
        switch self {
        case .directory(let url): return url.path
        case .postgresql(let address, _): return address.description
        }
    }

    /// Opens the store here, shared with every other manager of this process that uses it.
    /// A PostgreSQL server that does not answer is tried again for up to `waitingUpTo`
    /// (servers restart; a daemon started with its database should not lose the race), then
    /// the open fails with `.connectionFailed`.
    func open(waitingUpTo wait: Duration = .zero) async throws(HaulError) -> any DownloadStoring {
        switch self {
        case .directory(let directory):
            return try DownloadStore.shared(directory: directory)
        case .postgresql(let address, let stateDirectory):
            return try await PostgresStore.shared(address: address, stateDirectory: stateDirectory, waitingUpTo: wait)
        }
    }
}
