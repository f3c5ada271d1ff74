import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The PostgreSQL store: sessions, groups, downloads, segments and outboxes in a database
/// several processes (and, later, several machines) can reach.
///
/// Same promises as the SQLite store (`DownloadStore`): a batch of `StoreWrite`s commits in one
/// transaction, in arrival order (`GroupCommitter`, as there); events get increasing sequence
/// numbers per session, never reused; retention never forgets what the outbox pins.
///
/// Connections come from a `PostgresClient` pool, run by a task this store owns for as long
/// as it lives.
final class PostgresStore: DownloadStoring {
    /// Logs nothing: failures reach callers as `HaulError`s.
    static let logger = Logger(label: "haul.store.postgresql", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Connections at most in the pool: one writer at a time (the committer), readers beside it.
    static let maximumConnections = 8

    let address: PostgresAddress
    let stateDirectory: URL?
    let client: PostgresClient
    private let running: Task<Void, Never>
    let committer: GroupCommitter
    /// This process's `LISTEN` connection, started by the first reader of `changes`.
    let listener: PostgresListener
    /// What other daemons on the database changed (outboxes, queues), from `listener`.
    let changes: StoreChangeFeed?

    var isPersistent: Bool { true }

    /// How long one operation may go unanswered before it is given up (`PostgresStore+TimeLimit`).
    let operationTimeLimit: Duration

    /// How many of this store's transactions failed for another reason than a conflict: a
    /// connection ended under them, a timeout, a refusal (whether their commit was then found
    /// committed or not). What tests of a server going away check that they exercised.
    let transactionsInterrupted = NIOLockedValueBox(0)

    private init(address: PostgresAddress, stateDirectory: URL?, operationTimeLimit: Duration) {
        self.address = address
        self.stateDirectory = stateDirectory
        self.operationTimeLimit = operationTimeLimit
        let client = PostgresClient(configuration: Self.clientConfiguration(address))
        self.client = client
        self.running = Task { await client.run() }
        let listener = PostgresListener(address: address)
        self.listener = listener
        self.changes = StoreChangeFeed { [weak listener] feed in listener?.start(feeding: feed) }
        let interrupted = transactionsInterrupted
        self.committer = GroupCommitter { [client, address, operationTimeLimit] writes in
            // A task of its own: a caller's cancellation must not abort others' rows.
            await Task {
                do {
                    let fences = StoreWrite.fences(in: writes)
                    try await Self.transaction(
                        on: client, "save downloads", address: address, within: operationTimeLimit, counting: interrupted
                    ) { connection in
                        // What a rolled-back attempt recorded on the fences is forgotten.
                        for fence in fences { fence.attemptStarted() }
                        try await PostgresWrites.apply(writes, on: connection)
                    }
                    return .success(())
                } catch {
                    return .failure(PostgresFailure.error(error, "save downloads", address: address))
                }
            }.value
        }
    }

    deinit {
        listener.stop()
        running.cancel()
    }

    /// Connects (trying again for up to `wait` while the server does not answer), brings the
    /// schema up to date, and opens the pool.
    static func open(
        address: PostgresAddress, stateDirectory: URL?, waitingUpTo wait: Duration,
        operationTimeLimit: Duration = defaultOperationTimeLimit
    ) async throws(HaulError) -> PostgresStore {
        let connection = try await PostgresFailure.connect(address, waitingUpTo: wait)
        do {
            try await PostgresSchema.migrate(on: connection)
            try? await connection.close()
        } catch {
            try? await connection.close()
            throw PostgresFailure.error(error, "bring the store's tables up to date", address: address)
        }
        return PostgresStore(address: address, stateDirectory: stateDirectory, operationTimeLimit: operationTimeLimit)
    }

    static func clientConfiguration(_ address: PostgresAddress) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: address.host, port: address.port, username: address.user, password: address.password,
            database: address.database, tls: tls(address.tls))
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }

    static func tls(_ mode: PostgresAddress.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: return .disable
        case .prefer: return .prefer(.makeClientConfiguration())
        case .require: return .require(.makeClientConfiguration())
        }
    }

    private static let openStores = NIOLockedValueBox<[PostgresAddress: WeakStore]>([:])

    /// Read and written only under `openStores`' lock.
    private struct WeakStore: @unchecked Sendable {
        weak var store: PostgresStore?
    }

    /// One store per database in a process: a daemon's managers share its pool and its group commits.
    static func shared(address: PostgresAddress, stateDirectory: URL?, waitingUpTo wait: Duration) async throws(HaulError) -> PostgresStore {
        if let open = openStores.withLockedValue({ $0[address]?.store }) { return open }
        let store = try await open(address: address, stateDirectory: stateDirectory, waitingUpTo: wait)
        return openStores.withLockedValue { stores in
            if let raced = stores[address]?.store { return raced }
            stores[address] = WeakStore(store: store)
            return store
        }
    }

    // MARK: Writes

    func submit(_ write: StoreWrite) async throws(HaulError) {
        try await committer.submit(write)
    }

    /// Nothing to give back: the rows live in the server.
    func releaseMemory() async {}

    /// The store's tables and indexes, as the server counts them.
    func sizeOnDisk() async -> Int64 {
        (try? await read("measure the store") { connection in
            try await connection.one(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'haul' AND c.relkind = 'r'",
                as: Int64.self)
        }) ?? 0
    }

    /// Runs `body` on a connection of the pool, mapping failures to `HaulError`, within the
    /// store's time limit (`PostgresStore+TimeLimit`).
    func read<Value: Sendable>(
        _ action: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> Value
    ) async throws(HaulError) -> Value {
        do {
            return try await Self.answering(within: operationTimeLimit, action, address: address) { [client] watch in
                try await client.withConnection { connection in
                    watch.using(connection)
                    return try await body(connection)
                }
            }
        } catch {
            throw PostgresFailure.error(error, action, address: address)
        }
    }

    /// Runs `body` in a transaction of its own, mapping failures to `HaulError`, within the
    /// store's time limit (`PostgresStore+TimeLimit`).
    func write<Value: Sendable>(
        _ action: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> Value
    ) async throws(HaulError) -> Value {
        do {
            return try await Self.transaction(on: client, action, address: address, within: operationTimeLimit, counting: transactionsInterrupted, body)
        } catch {
            throw PostgresFailure.error(error, action, address: address)
        }
    }

    /// Attempts at a transaction the server rolls back to break a deadlock or a serialization
    /// conflict (`PostgresFailure.isConflict`) before its error reaches the caller.
    static let conflictAttempts = 5

    /// Runs `body` in a transaction, again from the start when the server rolled it back only
    /// because it conflicted with another (nothing of it was applied). Without this, a batch
    /// that lost such a conflict failed as a whole, and the files placed with it ended paused
    /// as if the store were broken.
    ///
    /// A failure after `body` finished (its `COMMIT` unanswered) is looked up before it
    /// reaches the caller (`PostgresStore+CommitOutcome`): a transaction the server committed
    /// returns `body`'s value, so the caller never writes it a second time.
    static func transaction<Value: Sendable>(
        on client: PostgresClient, _ action: String, address: PostgresAddress, within limit: Duration,
        counting interrupted: NIOLockedValueBox<Int>? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        var attempt = 1
        while true {
            let record = CommitRecord<Value>()
            do {
                return try await answering(within: limit, action, address: address) { watch in
                    try await client.withConnection { connection in
                        watch.using(connection)
                        return try await connection.withTransaction(logger: Self.logger) { connection in
                            let value = try await body(connection)
                            try record.committing(xid: try await transactionID(on: connection), value: value)
                            return value
                        }
                    }
                }
            } catch where attempt < conflictAttempts && PostgresFailure.isConflict(error) {
                _ = record.seal()
                attempt += 1
                // A few milliseconds apart, growing, so the two do not meet again at once.
                try await Task.sleep(for: .milliseconds(Int64.random(in: 1...10) * Int64(attempt)))
            } catch {
                interrupted?.withLockedValue { $0 += 1 }
                guard let sent = record.seal() else { throw error }
                guard await outcome(of: sent.xid, on: client, address: address, within: limit) == .committed else { throw error }
                return sent.value
            }
        }
    }
}

extension PostgresConnection {
    /// The single value of a query's single row (nil when it returns no row).
    func one<Value: PostgresDecodable>(_ query: PostgresQuery, as type: Value.Type) async throws -> Value? {
        var value: Value?
        for try await row in try await self.query(query, logger: PostgresStore.logger) {
            value = try row.makeRandomAccess()[0].decode(Value.self)
        }
        return value
    }

    /// Every row of a query, decoded by `decode`.
    func all<Value>(_ query: PostgresQuery, _ decode: (PostgresRow) throws -> Value) async throws -> [Value] {
        var values: [Value] = []
        for try await row in try await self.query(query, logger: PostgresStore.logger) {
            values.append(try decode(row))
        }
        return values
    }
}
