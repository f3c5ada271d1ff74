import Foundation
@testable import Haul
import HaulTestSupport

/// The two stores the store tests run against (`@Test(arguments: StoreBackend.allCases)`):
/// the same assertions hold for SQLite and for PostgreSQL.
enum StoreBackend: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite, postgresql

    var description: String { rawValue }

    /// A new, empty store: SQLite in memory, or a new database of the test cluster.
    func open() async throws -> any DownloadStoring {
        switch self {
        case .sqlite:
            return try DownloadStore.open(directory: nil)
        case .postgresql:
            let address = try PostgresAddress(parsing: try await PostgresCluster.shared().makeDatabase())
            return try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .zero)
        }
    }

    /// Where a manager keeps its downloads: `state`'s SQLite file, or a new database of the
    /// test cluster (with `state` for the files kept beside it). Call once per test and keep it:
    /// each call for PostgreSQL makes another database.
    func location(state: URL) async throws -> StoreLocation {
        switch self {
        case .sqlite:
            return .directory(state)
        case .postgresql:
            let address = try PostgresAddress(parsing: try await PostgresCluster.shared().makeDatabase())
            return .postgresql(address, stateDirectory: state)
        }
    }
}

extension DownloadStoring {
    /// How many transactions the store's group commit wrote so far.
    var transactionsCommitted: Int { committerForTests.transactionsCommitted }
    var pendingWrites: Int { committerForTests.pendingWrites }

    private var committerForTests: GroupCommitter {
        if let store = self as? DownloadStore { return store.committer }
        if let store = self as? PostgresStore { return store.committer }
        preconditionFailure("a store without a group commit: \(type(of: self))")
    }
}
