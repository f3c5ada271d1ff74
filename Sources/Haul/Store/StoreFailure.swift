import GRDB

/// Turns what SQLite, GRDB or a row decoder threw into the `HaulError` callers receive.
///
/// Every message names the database file, since a person reading it may have several state
/// directories (one per daemon, tests, `$XDG_STATE_HOME` overrides). A full disk reads as
/// `.diskFull`, like a full disk while writing a part file, so callers handle both alike.
enum StoreFailure {
    /// - Parameters:
    ///   - action: what was being done, as in "cannot \(action) in PATH".
    ///   - path: the database file, nil for an in-memory store.
    static func error(_ error: any Error, _ action: String, path: String?) -> HaulError {
        if let error = error as? HaulError { return error }
        let location = path ?? "the in-memory download store"
        if error is CancellationError {
            return HaulError(.canceled, "canceled while trying to \(action) in \(location)")
        }
        guard let database = error as? DatabaseError else {
            return HaulError(.fileSystem, "cannot \(action) in \(location): \(error)")
        }
        // GRDB's description includes the SQL, which is long and says nothing to a user.
        let detail = "\(database.message ?? "\(database.resultCode)") (SQLite error \(database.extendedResultCode.rawValue))"
        if database.resultCode == .SQLITE_FULL {
            return HaulError(.diskFull, "cannot \(action) in \(location): the disk is full: \(detail)")
        }
        return HaulError(.fileSystem, "cannot \(action) in \(location): \(detail)")
    }
}
