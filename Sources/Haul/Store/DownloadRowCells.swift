import Foundation

/// The cells of one download row (selected in `DownloadColumn` order) as a store backend
/// reads them: the one thing the SQLite and PostgreSQL stores do differently when they turn a
/// row back into a `StoredDownload`. The assembly itself (`storedDownload()`) is shared, so
/// that both backends read every column the same way.
protocol DownloadRowCells {
    func text(_ column: DownloadColumn) throws -> String
    func optionalText(_ column: DownloadColumn) throws -> String?
    func integer(_ column: DownloadColumn) throws -> Int64
    func optionalInteger(_ column: DownloadColumn) throws -> Int64?
    func real(_ column: DownloadColumn) throws -> Double
    func optionalReal(_ column: DownloadColumn) throws -> Double?
    func flag(_ column: DownloadColumn) throws -> Bool
}

extension DownloadRowCells {
    /// The download of this row; throws `StoredRowError` naming the download when any
    /// column cannot be read back.
    func storedDownload(json: JSONColumns) throws -> StoredDownload {
        do {
            return try assemble(json)
        } catch {
            let id = (try? integer(.id)).map { DownloadID(rawValue: UInt64(bitPattern: $0)).description } ?? "?"
            throw StoredRowError("download \(id) cannot be read back: \(error)")
        }
    }

    private func parsed<Value: RawRepresentable<String>>(_ column: DownloadColumn) throws -> Value {
        let text = try text(column)
        guard let value = Value(rawValue: text) else { throw StoredRowError("unknown \(column.name) '\(text)'") }
        return value
    }

    private func url(_ text: String, _ column: DownloadColumn) throws -> URL {
        guard let url = URL(string: text) else { throw StoredRowError("invalid \(column.name) '\(text)'") }
        return url
    }

    private func assemble(_ json: JSONColumns) throws -> StoredDownload {
        let url = try url(try text(.url), .url)
        let finalURL = try optionalText(.finalURL).map { text in try self.url(text, .finalURL) }
        var request = DownloadRequest(
            url: url,
            directory: StoredURL.directory(try text(.directory)),
            fileName: try optionalText(.fileName),
            headers: try json.decodeHeaders(try text(.headers)),
            checksums: try json.decodeChecksums(try text(.checksums)),
            priority: Int(try integer(.priority)),
            conflictPolicy: try parsed(.conflictPolicy),
            metadata: try json.decodeMetadata(try text(.metadata)))
        try json.decode(optional: TransferOptionsColumn.self, try optionalText(.transferOptions))?.apply(to: &request)
        request.mirrors = try MirrorsColumn.urls(try optionalText(.mirrors))
        return StoredDownload(
            id: DownloadID(rawValue: UInt64(bitPattern: try integer(.id))),
            session: try text(.session),
            group: try optionalText(.groupName),
            position: try integer(.position),
            kept: KeptRequest(request),
            partKey: try text(.partKey),
            state: try parsed(.state),
            finalURL: finalURL,
            validator: try json.decodeValidator(try optionalText(.validator)),
            expectedLength: try optionalInteger(.expectedLength),
            durableOffset: try integer(.durableOffset),
            placement: try json.decodePlacement(try optionalText(.placement)),
            filePath: try optionalText(.filePath),
            fileSize: try optionalInteger(.fileSize),
            fileModified: try optionalReal(.fileModified).map(StoredDate.date),
            skipped: try flag(.skipped),
            verifiedChecksums: try json.decodeChecksums(try text(.verifiedChecksums)),
            error: try json.decode(optional: StoredError.self, try optionalText(.error)),
            attempts: Int(try integer(.attempts)),
            createdAt: StoredDate.date(try real(.createdAt)),
            updatedAt: StoredDate.date(try real(.updatedAt)))
    }
}
