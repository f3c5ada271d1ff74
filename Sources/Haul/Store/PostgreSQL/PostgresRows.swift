import Foundation
import GRDB
import PostgresNIO

/// The `haul.download` statements of the PostgreSQL store, and downloads bound into them and
/// read back from them.
///
/// The columns and their values are the SQLite store's (`DownloadColumn`,
/// `DownloadRowEncoder.value(of:in:request:)`), so that both stores keep the same facts in
/// the same shapes; only the placeholders (`$1`) and `skipped` (a boolean here) differ.
enum PostgresRows {
    private static let columnList = DownloadColumn.all.map(\.name).joined(separator: ", ")

    /// Inserts a download, or updates every column of the row with the same ID (its
    /// `ordinal`, the insertion order, stays).
    static let upsertSQL: String = {
        let placeholders = DownloadColumn.all.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let updates = DownloadColumn.all.filter { $0 != .id }.map { "\($0.name) = excluded.\($0.name)" }
        return """
            INSERT INTO haul.download (\(columnList)) VALUES (\(placeholders))
            ON CONFLICT (id) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }()

    /// Updates the `DownloadColumn.progress` columns of a row (the ID is bound last).
    static let progressUpdateSQL: String = {
        let sets = DownloadColumn.progress.enumerated().map { "\($1.name) = $\($0 + 1)" }
        return "UPDATE haul.download SET \(sets.joined(separator: ", ")) WHERE id = $\(DownloadColumn.progress.count + 1)"
    }()

    /// Selects every column, in case order; append a WHERE / ORDER BY clause.
    static let selectSQL = "SELECT \(columnList) FROM haul.download"

    /// The finished states, as stored.
    static let finishedStates = "('completed', 'failed', 'canceled')"

    /// Every column of `download`, for `upsertSQL`.
    static func upsert(_ download: StoredDownload, encoder: DownloadRowEncoder) throws -> PostgresQuery {
        PostgresQuery(unsafeSQL: upsertSQL, binds: try bindings(DownloadColumn.all, of: download, encoder: encoder))
    }

    /// The progress columns of `download`, then its ID, for `progressUpdateSQL`.
    static func progressUpdate(_ download: StoredDownload, encoder: DownloadRowEncoder) throws -> PostgresQuery {
        var binds = try bindings(DownloadColumn.progress, of: download, encoder: encoder)
        binds.append(Int64(bitPattern: download.id.rawValue))
        return PostgresQuery(unsafeSQL: progressUpdateSQL, binds: binds)
    }

    private static func bindings(
        _ columns: [DownloadColumn], of download: StoredDownload, encoder: DownloadRowEncoder
    ) throws -> PostgresBindings {
        var binds = PostgresBindings(capacity: columns.count + 1)
        for column in columns {
            let value = try encoder.value(of: column, in: download, request: download.kept)
            switch value.storage {
            case .null: binds.appendNull()
            case .int64(let number) where column == .skipped: binds.append(number != 0)
            case .int64(let number): binds.append(number)
            case .double(let number): binds.append(number)
            case .string(let text): binds.append(text)
            case .blob: throw StoredRowError("column \(column.name) has no binary form")
            }
        }
        return binds
    }
}

/// Turns rows selected with `PostgresRows.selectSQL` back into downloads. Create one per read.
struct PostgresRowDecoder {
    private let json = JSONColumns()

    /// Throws `StoredRowError` naming the download when any column cannot be read back.
    func download(from row: PostgresRow) throws -> StoredDownload {
        try PostgresRowCells(cells: row.makeRandomAccess()).storedDownload(json: json)
    }
}

/// A PostgreSQL row's cells, read by column index.
private struct PostgresRowCells: DownloadRowCells {
    let cells: PostgresRandomAccessRow

    func text(_ column: DownloadColumn) throws -> String { try cells[column.rawValue].decode(String.self) }
    func optionalText(_ column: DownloadColumn) throws -> String? { try cells[column.rawValue].decode(String?.self) }
    func integer(_ column: DownloadColumn) throws -> Int64 { try cells[column.rawValue].decode(Int64.self) }
    func optionalInteger(_ column: DownloadColumn) throws -> Int64? { try cells[column.rawValue].decode(Int64?.self) }
    func real(_ column: DownloadColumn) throws -> Double { try cells[column.rawValue].decode(Double.self) }
    func optionalReal(_ column: DownloadColumn) throws -> Double? { try cells[column.rawValue].decode(Double?.self) }
    func flag(_ column: DownloadColumn) throws -> Bool { try cells[column.rawValue].decode(Bool.self) }
}
