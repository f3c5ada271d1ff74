import Foundation
import GRDB

/// The columns of the `download` table, in the order the store's statements bind and read them.
///
/// One enum drives the INSERT's column list, the SELECT's column list, the bound values and the
/// decoded fields, so that they cannot drift apart: adding a column means adding a case, and
/// the compiler then asks for its value and its decoding.
enum DownloadColumn: Int, CaseIterable {
    case id, session, groupName, position, priority, state, url, directory, fileName
    case headers, checksums, metadata, conflictPolicy, partKey, finalURL, validator
    case expectedLength, durableOffset, placement, filePath, fileSize, fileModified, skipped
    case verifiedChecksums, error, attempts, createdAt, updatedAt, transferOptions, mirrors

    var name: String { String(describing: self) }

    /// `allCases`, built once (the synthesized property builds a new array at each call).
    static let all = allCases

    private static let columnList = allCases.map(\.name).joined(separator: ", ")

    /// Inserts a download, or updates every column of the row with the same ID.
    ///
    /// An upsert rather than `INSERT OR REPLACE`: REPLACE deletes the old row first, and the
    /// delete would cascade to the download's segments.
    static let upsertSQL: String = {
        let placeholders = Array(repeating: "?", count: allCases.count).joined(separator: ", ")
        let updates = allCases.filter { $0 != .id }.map { "\($0.name) = excluded.\($0.name)" }
        return """
            INSERT INTO download (\(columnList)) VALUES (\(placeholders))
            ON CONFLICT (id) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }()

    /// What changes as a download runs: its state, resume and placement facts, and the file it
    /// became. Its request, group and place in the queue change only when someone changes them.
    static let progress: [DownloadColumn] = [
        .state, .finalURL, .validator, .expectedLength, .durableOffset, .placement, .filePath, .fileSize,
        .fileModified, .skipped, .verifiedChecksums, .error, .attempts, .updatedAt,
    ]

    /// Updates the `progress` columns of a stored row (the ID is bound last).
    static let progressUpdateSQL =
        "UPDATE download SET \(progress.map { "\($0.name) = ?" }.joined(separator: ", ")) WHERE id = ?"

    /// Selects every column, in case order; append a WHERE / ORDER BY clause.
    static let selectSQL = "SELECT \(columnList) FROM download"
}

/// Binds downloads into `DownloadColumn.upsertSQL` and `progressUpdateSQL`. Create one per batch.
///
/// The downloads of a batch nearly always share their directory and their metadata (`haul
/// get` gives every request into one directory the same dictionary): each is turned into
/// text once per run of equal values, not once per row. Encoding the rows was most of the
/// writer's time when a batch of 5,000 was added (23 of 40 ms, a `URL.path` and a JSON
/// object per row), and transfers wait for that write.
struct DownloadRowEncoder {
    private let json = JSONColumns()
    private let last = LastEncoded()

    /// The last directory and metadata encoded, with their text. Used by one batch's writer
    /// at a time, never shared.
    private final class LastEncoded {
        var directory: (url: URL, text: String)?
        var metadata: (value: [String: String], text: String)?
    }

    /// Binds every column of `download` into `upsert`, ready to execute.
    func bind(_ download: StoredDownload, to upsert: Statement) throws {
        try bind(DownloadColumn.all, of: download, to: upsert)
    }

    /// Binds the `progress` columns, then the ID, into `update`, ready to execute.
    func bindProgress(_ download: StoredDownload, to update: Statement) throws {
        try bind(DownloadColumn.progress, of: download, to: update, thenID: true)
    }

    private func bind(
        _ columns: [DownloadColumn], of download: StoredDownload, to statement: Statement, thenID: Bool = false
    ) throws {
        var binder = StatementBinder(statement)
        for column in columns {
            try binder.bind(try value(of: column, in: download, request: download.kept))
        }
        if thenID { try binder.bind(Int64(bitPattern: download.id.rawValue).databaseValue) }
        try binder.finish()
    }

    /// The value of one column of `download`, as SQLite binds it (the PostgreSQL store binds the same values).
    func value(
        of column: DownloadColumn, in download: borrowing StoredDownload, request: borrowing KeptRequest
    ) throws -> DatabaseValue {
        switch column {
        case .id: return Int64(bitPattern: download.id.rawValue).databaseValue
        case .session: return download.session.databaseValue
        case .groupName: return download.group.databaseValue
        case .position: return download.position.databaseValue
        case .priority: return request.priority.databaseValue
        case .state: return download.state.rawValue.databaseValue
        case .url: return request.urlText.databaseValue
        case .directory: return directoryText(request.directory).databaseValue
        case .fileName: return request.fileName.databaseValue
        case .headers: return json.encode(headers: request.headers).databaseValue
        case .checksums: return json.encode(checksums: request.checksums).databaseValue
        case .metadata: return metadataText(request.metadata).databaseValue
        case .conflictPolicy: return request.conflictPolicy.rawValue.databaseValue
        case .partKey: return download.partKey.databaseValue
        case .finalURL: return download.finalURL?.absoluteString.databaseValue ?? .null
        case .validator: return json.encode(validator: download.validator).databaseValue
        case .expectedLength: return download.expectedLength.databaseValue
        case .durableOffset: return download.durableOffset.databaseValue
        case .placement: return json.encode(placement: download.placement).databaseValue
        case .filePath: return download.filePath.databaseValue
        case .fileSize: return download.fileSize.databaseValue
        case .fileModified: return StoredDate.value(download.fileModified)
        case .skipped: return download.skipped.databaseValue
        case .verifiedChecksums: return json.encode(checksums: download.verifiedChecksums).databaseValue
        case .error: return try json.encode(optional: download.error).databaseValue
        case .attempts: return download.attempts.databaseValue
        case .createdAt: return StoredDate.value(download.createdAt)
        case .updatedAt: return StoredDate.value(download.updatedAt)
        case .transferOptions: return try json.encode(optional: TransferOptionsColumn(request)).databaseValue
        case .mirrors: return MirrorsColumn.text(request.mirrors).databaseValue
        }
    }

    private func directoryText(_ directory: URL) -> String {
        if let known = last.directory, known.url == directory { return known.text }
        let text = StoredURL.directoryText(directory)
        last.directory = (directory, text)
        return text
    }

    private func metadataText(_ metadata: [String: String]) -> String {
        if let known = last.metadata, known.value == metadata { return known.text }
        let text = json.encode(metadata: metadata)
        last.metadata = (metadata, text)
        return text
    }
}

/// Turns rows selected with `DownloadColumn.selectSQL` back into downloads. Create one per read.
struct DownloadRowDecoder {
    private let json = JSONColumns()

    /// Throws `StoredRowError` naming the download when any column cannot be read back.
    func download(from row: Row) throws -> StoredDownload {
        try SQLiteRowCells(row: row).storedDownload(json: json)
    }
}

/// A SQLite row's cells, read by column index.
private struct SQLiteRowCells: DownloadRowCells {
    let row: Row

    func text(_ column: DownloadColumn) throws -> String { try row.decode(String.self, atIndex: column.rawValue) }
    func optionalText(_ column: DownloadColumn) throws -> String? { try row.decode(String?.self, atIndex: column.rawValue) }
    func integer(_ column: DownloadColumn) throws -> Int64 { try row.decode(Int64.self, atIndex: column.rawValue) }
    func optionalInteger(_ column: DownloadColumn) throws -> Int64? { try row.decode(Int64?.self, atIndex: column.rawValue) }
    func real(_ column: DownloadColumn) throws -> Double { try row.decode(Double.self, atIndex: column.rawValue) }
    func optionalReal(_ column: DownloadColumn) throws -> Double? { try row.decode(Double?.self, atIndex: column.rawValue) }
    func flag(_ column: DownloadColumn) throws -> Bool { try row.decode(Bool.self, atIndex: column.rawValue) }
}

/// Dates as REAL seconds since Foundation's reference date, so they round-trip exactly
/// (seconds since 1970 would lose the last bit of some `Date`s on the way back).
enum StoredDate {
    static func value(_ date: Date?) -> DatabaseValue {
        date.map { $0.timeIntervalSinceReferenceDate.databaseValue } ?? .null
    }

    static func date(_ seconds: Double) -> Date { Date(timeIntervalSinceReferenceDate: seconds) }
}

/// A download's directory as a plain path, so that it reads well and can be queried with the
/// path a person types; a trailing `/` records that the URL was a directory URL, so that the
/// same `URL` comes back. A non-file URL (never valid as a directory) is kept as a URL string.
enum StoredURL {
    static func directoryText(_ url: URL) -> String {
        guard url.isFileURL else { return url.absoluteString }
        let path = url.path
        return url.hasDirectoryPath && !path.hasSuffix("/") ? path + "/" : path
    }

    static func directory(_ text: String) -> URL {
        guard text.hasPrefix("/") else { return URL(string: text) ?? URL(fileURLWithPath: text) }
        return URL(fileURLWithPath: text, isDirectory: text.hasSuffix("/"))
    }
}

/// A request's transfer options as stored: `{"maxBytesPerSecond":1048576,"split":4}`, or no
/// value at all (NULL) when it has none, which is nearly always. `waitDeadline` is in seconds
/// since Foundation's reference date, as `StoredDate` (exact on the way back); rows written
/// before it existed have no such key and read as nil.
struct TransferOptionsColumn: Codable {
    var split: Int?
    var maxBytesPerSecond: Int64?
    var waitDeadline: Double?

    /// Nil when the request has no option to keep.
    init?(_ request: borrowing KeptRequest) {
        guard request.split != nil || request.maxBytesPerSecond != nil || request.waitDeadline != nil else { return nil }
        split = request.split
        maxBytesPerSecond = request.maxBytesPerSecond
        waitDeadline = request.waitDeadline?.timeIntervalSinceReferenceDate
    }

    func apply(to request: inout DownloadRequest) {
        request.split = split
        request.maxBytesPerSecond = maxBytesPerSecond
        request.waitDeadline = waitDeadline.map(StoredDate.date)
    }
}

/// A request's mirror URLs as stored: a JSON array of URL strings, or NULL when it has none
/// (every row written before schema version 5, and nearly every row since).
enum MirrorsColumn {
    static func text(_ mirrors: [URL]) -> String? {
        mirrors.isEmpty ? nil : JSONText.strings(mirrors.map(\.absoluteString))
    }

    static func urls(_ text: String?) throws -> [URL] {
        guard let text else { return [] }
        let strings = try JSONDecoder().decode([String].self, from: Data(text.utf8))
        return try strings.map { string in
            guard let url = URL(string: string) else { throw StoredRowError("invalid mirror URL '\(string)'") }
            return url
        }
    }
}
