import GRDB
import GRDBSQLite

/// Binds values straight into a prepared statement's parameters, one after the other.
///
/// Why: GRDB's `StatementArguments` takes values as existentials and converts each back to a
/// `DatabaseValue` through a protocol witness. For the download table's 29 columns that cost
/// more than SQLite's own work: adding 5,000 downloads spent two thirds of its insert
/// transaction building arguments, before the first transfer could start.
///
/// Creating a binder resets the statement and clears its bindings through GRDB
/// (`setUncheckedArguments` with no arguments), so that GRDB treats the statement as bound
/// and its next `execute()` runs it with the values bound here.
struct StatementBinder {
    private let statement: Statement
    private var index: CInt = 1

    init(_ statement: Statement) {
        statement.setUncheckedArguments(StatementArguments())
        self.statement = statement
    }

    /// Binds the next parameter. Throws when SQLite refuses it (too big, out of memory, or
    /// more values than the statement has parameters).
    mutating func bind(_ value: DatabaseValue) throws {
        let handle = statement.sqliteStatement
        let code: CInt
        switch value.storage {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .int64(let number):
            code = sqlite3_bind_int64(handle, index, number)
        case .double(let number):
            code = sqlite3_bind_double(handle, index, number)
        case .string(let text):
            // The UTF-8 bytes and their length: a NUL inside the text is kept, not an end.
            var text = text
            code = text.withUTF8 { bytes in
                // A nil pointer would bind NULL, not an empty text.
                guard let base = bytes.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
                return sqlite3_bind_text(handle, index, base, CInt(bytes.count), Self.transient)
            }
        case .blob(let data):
            code = data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob(handle, index, base, CInt(bytes.count), Self.transient)
            }
        }
        guard code == SQLITE_OK else {
            throw StoredRowError("cannot bind value \(index) of a row: SQLite error \(code)")
        }
        index += 1
    }

    /// Binds the next parameter as text from its UTF-8 bytes: for values written as bytes
    /// (an outbox event), which would otherwise be made a `String` only to be bound.
    mutating func bindText(_ bytes: [UInt8]) throws {
        let handle = statement.sqliteStatement
        let code = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text(handle, index, $0, CInt(buffer.count), Self.transient)
            }
        }
        guard code == SQLITE_OK else {
            throw StoredRowError("cannot bind value \(index) of a row: SQLite error \(code)")
        }
        index += 1
    }

    /// Throws unless every parameter of the statement got a value.
    func finish() throws {
        let expected = sqlite3_bind_parameter_count(statement.sqliteStatement)
        guard index - 1 == expected else {
            throw StoredRowError("bound \(index - 1) of the \(expected) values of a row")
        }
    }

    /// SQLite copies the bytes before the call returns (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}
