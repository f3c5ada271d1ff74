import Foundation
import NIOCore
import PostgresNIO

/// Turns what PostgreSQL or postgres-nio threw into the `HaulError` callers receive, and
/// connects with retries while a server does not answer yet.
///
/// Every message names the database (never its password). A server that cannot be reached reads
/// as `.connectionFailed`, anything the server refused (a login, a statement) as `.fileSystem`,
/// like the SQLite store's failures, so callers treat both stores alike.
enum PostgresFailure {
    static func error(_ error: any Error, _ action: String, address: PostgresAddress) -> HaulError {
        if let error = error as? HaulError { return error }
        if let transaction = error as? PostgresTransactionError, let cause = transaction.cause {
            return Self.error(cause, action, address: address)
        }
        if error is CancellationError {
            return HaulError(.canceled, "canceled while trying to \(action) in \(address)")
        }
        if let psql = error as? PSQLError {
            if let server = psql.serverInfo {
                let message = server[.message] ?? "error"
                let state = server[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                // A server shutting down or starting up, or a connection it broke: as good as
                // unreachable, and back soon.
                let code: HaulError.Code = server[.sqlState].map(isServerGoingAway) == true ? .connectionFailed : .fileSystem
                return HaulError(code, "cannot \(action) in \(address): \(message)\(state)")
            }
            if isUnreachable(psql) {
                return HaulError(.connectionFailed, "cannot \(action) in \(address): the server cannot be reached (\(psql.code))")
            }
            return HaulError(.fileSystem, "cannot \(action) in \(address): \(psql.code)\(psql.underlying.map { ": \($0)" } ?? "")")
        }
        if error is ChannelError || error is IOError {
            // The connection broke under the statement (a raw channel error, not one the
            // driver wrapped): as a server that went away.
            return HaulError(.connectionFailed, "cannot \(action) in \(address): the connection broke (\(error))")
        }
        return HaulError(.fileSystem, "cannot \(action) in \(address): \(error)")
    }

    /// Whether the server rolled the transaction back only to break a conflict with another
    /// transaction (`deadlock_detected` 40P01, `serialization_failure` 40001): running it
    /// again is the standard answer. In a fleet, a daemon's batch and its own lease renewal,
    /// or two daemons finishing downloads of the same groups, lock rows in different orders
    /// now and then; the server then aborts one of them.
    static func isConflict(_ error: any Error) -> Bool {
        if let transaction = error as? PostgresTransactionError {
            return [transaction.closureError, transaction.commitError].contains { $0.map(isConflict) ?? false }
        }
        guard let psql = error as? PSQLError, let state = psql.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// Whether a server's refusal says it is going away or not there yet, not that the
    /// statement was wrong: class 08 (connection exception), `admin_shutdown` (57P01, a
    /// restart or a `pg_terminate_backend`), `crash_shutdown` (57P02), `cannot_connect_now`
    /// (57P03, starting up or in recovery). A write that met one is tried again later.
    static func isServerGoingAway(_ sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// Whether the error says the server was not there (nothing listening, no route, a
    /// connection that broke), as opposed to a server that answered with a refusal.
    static func isUnreachable(_ error: PSQLError) -> Bool {
        error.code == .connectionError || error.code == .serverClosedConnection
            || error.code == .uncleanShutdown || error.code == .poolClosed || error.code == .clientClosedConnection
    }

    /// A connection of its own (for the migrations), tried again every half second up to `wait`
    /// while the server cannot be reached. A server that answers and refuses (a wrong password,
    /// no such database) fails at once: waiting will not change its mind.
    static func connect(_ address: PostgresAddress, waitingUpTo wait: Duration) async throws(HaulError) -> PostgresConnection {
        let deadline = ContinuousClock.now.advanced(by: wait)
        var configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.user, password: address.password,
            database: address.database, tls: connectionTLS(address.tls))
        configuration.options.connectTimeout = .seconds(10)
        while true {
            do {
                return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: PostgresStore.logger)
            } catch {
                let failure = Self.error(error, "connect to the download store", address: address)
                guard failure.code == .connectionFailed, ContinuousClock.now < deadline else { throw failure }
                do {
                    try await Task.sleep(for: .milliseconds(500))
                } catch {
                    throw HaulError(.canceled, "canceled while waiting for \(address) to answer")
                }
            }
        }
    }

    private static func connectionTLS(_ mode: PostgresAddress.TLSMode) -> PostgresConnection.Configuration.TLS {
        switch mode {
        case .disable: return .disable
        case .prefer: return .prefer(try! .init(configuration: .makeClientConfiguration()))
        case .require: return .require(try! .init(configuration: .makeClientConfiguration()))
        }
    }
}

extension PostgresTransactionError {
    /// What failed: the transaction's body, else its commit or its `BEGIN`.
    var cause: (any Error)? { closureError ?? commitError ?? beginError }
}
